"""Publishing: the environment check, the website, slides, answer keys and grading. The
learner's checker (:mod:`course.publishing.grading.learner`) imports nothing heavy."""

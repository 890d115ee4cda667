"""numpy and torch compared on pinned, printed thread counts (issue 8: lesson 01 compared numpy
on all threads with torch on one)."""

from threadpoolctl import threadpool_info

from course.measure import matmul


def blas_threads():
    return [p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"]


def test_numpy_record_carries_the_pinned_thread_count_and_the_pool_is_restored():
    before = blas_threads()
    record = matmul.time_matmul(64, library="numpy", dtype="fp64", threads=1, min_run_time=0.01)
    assert record.threads == 1
    assert blas_threads() == before


def test_numpy_without_threads_says_default():
    record = matmul.time_matmul(32, library="numpy", dtype="fp64", min_run_time=0.01)
    assert record.threads is None


def test_numpy_blas_names_the_library_and_its_threads():
    text = matmul.numpy_blas()
    assert "threads" in text or text == "unknown"

"""The readings' claims: each rule as a reading writes it, named by the reading's title,
beside the course's calculation of the same thing. Imports calculators and facts."""

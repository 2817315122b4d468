"""Studies: their definition (config), the run matrix, the runner and executor, and verification-only studies."""

"""`python -m critiquebench`: the same as the `critiquebench` program."""

from critiquebench.cli import main

main()

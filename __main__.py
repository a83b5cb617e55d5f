"""`python -m physcodegym` -> the headless command line."""

from physcodegym.headless.cli import main

if __name__ == "__main__":
    raise SystemExit(main())

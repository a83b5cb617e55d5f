"""`python -m physcodegym` -> the headless command line."""

from physcodegym.headless.cli import main

if __name__ == "__main__":
    from physcodegym.core.exit import exit_child

    exit_child(main())

"""The HTML report and leaderboard tables of a batch (`build`); its evidence, plots and media are internal."""

__all__ = ["build"]  # the modules other packages may import

"""Maximum-likelihood fitting of candidate laws, goodness of fit (λ², W², A²) and selection.

    >>> from wagon.fitting import Observation, fit
    >>> report = fit(sample)             # doctest: +SKIP
    >>> whole_seconds = Observation.grid(1.0, lower=2, upper=600)
    >>> report = fit(think_times, observation=whole_seconds)   # doctest: +SKIP
    >>> report.best.name, report.best.frozen.mean()   # doctest: +SKIP
    >>> print(report.summary())          # doctest: +SKIP
"""
from .laws import CONTINUOUS, DISCRETE, LAWS, FitFailed, Law, Sample, law
from .observation import Observation
from .observed import Observed
from .report import CandidateFit, FitReport, fit, is_discrete

__all__ = ["fit", "FitReport", "CandidateFit", "Law", "LAWS", "CONTINUOUS", "DISCRETE", "law",
           "Sample", "FitFailed", "is_discrete", "Observation", "Observed"]

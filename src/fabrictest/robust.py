"""Constants of robust statistics, written once: every spread the suite tells from a median
absolute deviation (``fabric-report``'s session spreads, calibrated bounds and change points,
``fabric-sweep``'s level, the all-to-many growth check of the ReFrame tests) scales it the
same way."""

#: the median absolute deviation of a normal sample times this is its standard deviation
#: (1 / the normal distribution's third quartile, 1 / 0.6745)
MAD_TO_SIGMA = 1.4826

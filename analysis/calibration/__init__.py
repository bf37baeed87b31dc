"""Calibration of the card's verdicts over subjects whose truth is known (beyond the paper; issue 22).

* :mod:`.simulate` — per-pair answers of simulated subjects drawn from their exact choice
  probabilities, many seeds at once, and every verdict the card prints applied to each seed;
* :mod:`.study` — the false-finding rate, power at 5 / 10 / 20 pp and interval coverage per
  condition of a battery at its own ``--pairs``; the tables notebook 10 writes;
* :mod:`.power` — the minimum detectable excess the dry run states before any money is spent;
* :mod:`.cited` — the calibration numbers the card quotes for its battery (read from
  ``data/derived/calibration_summary.csv``; no audit import, so the card can use it).
"""

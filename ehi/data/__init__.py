"""Datasets: local BEIR directories, downloaders, the synthetic generator, validation."""

"""Corpora, manifests and datasets: the data the models are trained on."""

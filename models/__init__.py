"""Whole pretrained models and their loaders (not papers): what the atlas runs beside encoders/."""

# Everything is in pyproject.toml; this file lets older tools (`python setup.py ...`) find it.
from setuptools import setup

setup()

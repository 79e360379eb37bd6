"""Data shipped with wagon (``wagon.data``): the sample log ``wagon demo`` fits, read through
``importlib.resources`` so that it works from an installed package as from a checkout."""

"""Grid runners: execute many simulated scenarios on a local process pool or a Dask cluster."""

"""DNA-encoded library (DEL) screens: the KinDEL file schema, a simulator, count likelihoods, DEL-Compose and
fingerprint baselines.

- :mod:`.schema`: the KinDEL column names and the Great Expectations schemas of its tables;
- :mod:`.files`: read (and check) a KinDEL folder, write one;
- :mod:`.library`: building blocks from RDKit's shipped NCI set and the three-cycle enumeration;
- :mod:`.simulate`: a hidden affinity, low-depth sequencing counts, enrichment, held-out Kd, splits;
- :mod:`.splits`: random and disynthon splits;
- :mod:`.counts`: Poisson / zero-inflated Poisson / negative binomial log-likelihoods and Poisson-bound
  enrichment;
- :mod:`.fingerprints`: Morgan fingerprints (RDKit);
- :mod:`.baselines`: RF, XGBoost, KNN and the DNN regressors on fingerprints;
- :mod:`.compose`: DEL-Compose (full and factorized) fit to the counts;
- :mod:`.scoring`: score a user's SMILES table with a model trained on a library.
"""

"""Privacy-preserving exchange of training data.

``pseudonymize``: an annotated corpus with every gold span replaced by keyed surrogates (offsets moved);
``perturb``: baselines on word embeddings (random PHI vectors, Gaussian noise, nearest-neighbour
substitution); ``representation``: adversarially trained private token representations (torch);
``audit``: attacks on released data (a retrained adversary, a known-plaintext lookup, a discriminator of
pseudonymised text) with a pass/fail verdict.
"""

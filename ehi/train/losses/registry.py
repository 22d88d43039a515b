"""The L_siamese registry: a new loss is one module plus one line here.

name -> fn(pos (n,), neg (n, m), mask (n, m), *, margin, temperature) -> scalar. Beyond the paper:
the DEXML losses (Gupta et al., ICLR 2024) as alternatives for L_siamese.
"""

from __future__ import annotations

from ehi.train.losses.dexml import SIAMESE_OPTIONS
from ehi.train.losses.pairwise import infonce_loss, triplet_loss

SIAMESE_LOSSES = {"triplet": triplet_loss, "infonce": infonce_loss, "softmax": infonce_loss, **SIAMESE_OPTIONS}
# "softmax" is the multi-label softmax the DEXML paper starts from: InfoNCE whose denominator also
# holds the query's *other* positives in the batch (ehi_loss adds them to the mask), so a query's
# positives compete with each other. "infonce" and "decoupled_softmax" mask them out: each
# positive competes with negatives only, which is Decoupled Softmax's definition.
SHARED_DENOMINATOR = {"softmax"}

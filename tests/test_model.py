"""The rationale network: straight-through selection and the classifier's information flow."""

import pytest
import torch

from icda.model import CachedSentences, RationaleNetwork, transform_real_slots, linear_max, masked_max, straight_through_top_k, zero_filled_max
from icda.records import PAD
from icda.settings import ModelSettings


def _network(objective="mmi", k=1, seed=0, vectors=None, **options):
    torch.manual_seed(seed)
    vectors = torch.randn(40, 12) if vectors is None else vectors
    settings = ModelSettings(d_model=16, layers=1, heads=2, dff=32, dropout=0.0, k=k, objective=objective, **options)
    return RationaleNetwork(CachedSentences(vectors), settings, max_sentences=8).eval()


def test_straight_through_forward_is_exactly_one_hot_and_skips_padding():
    scores = torch.tensor([[0.1, 2.0, 0.3, 9.0], [1.0, 0.5, -1.0, 0.0]])
    mask = torch.tensor([[True, True, True, False], [True, True, True, True]])
    z = straight_through_top_k(scores, mask, k=1)
    assert z.tolist() == [[0.0, 1.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0]]  # slot 3 of row 0 is padding
    z2 = straight_through_top_k(scores, mask, k=2)
    assert z2.sum(dim=1).tolist() == [2.0, 2.0]


def test_straight_through_gradient_is_the_softmax_gradient():
    scores = torch.tensor([[0.2, 1.0, -0.5]], requires_grad=True)
    weights = torch.tensor([[3.0, -1.0, 2.0]])
    (straight_through_top_k(scores, torch.ones(1, 3, dtype=torch.bool), 1) * weights).sum().backward()
    ref = scores.detach().clone().requires_grad_(True)
    (torch.softmax(ref, -1) * weights).sum().backward()
    assert torch.allclose(scores.grad, ref.grad)
    assert scores.grad.abs().sum() > 0


def test_gradients_reach_the_selector_through_the_classifier_loss():
    model = _network()
    ids = torch.tensor([[0, 1, 2, 3, PAD], [4, 5, 6, 7, 8]])
    out = model(ids)
    torch.nn.functional.cross_entropy(out.logits, torch.tensor([0, 1])).backward()
    assert model.scorer.weight.grad.abs().sum() > 0
    for p in model.transformer.parameters():
        assert p.grad is not None and p.grad.abs().sum() > 0


def test_the_transformer_on_real_slots_alone_is_the_padded_transformer():
    """transform_real_slots skips empty slots; at the real ones it must compute exactly what
    nn.TransformerEncoder computes with a padding mask, forwards and backwards."""
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(16, 4, 32, dropout=0.0, batch_first=True)
    encoder = torch.nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
    x = torch.randn(3, 5, 16, requires_grad=True)
    mask = torch.tensor([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1], [1, 0, 0, 0, 0]], dtype=torch.bool)
    weights = torch.randn(3, 5, 16)
    padded = encoder(x, src_key_padding_mask=~mask)
    packed = transform_real_slots(encoder, x, mask)
    assert torch.allclose(packed[mask], padded[mask], atol=1e-5)
    assert packed[~mask].abs().max() == 0
    params = [x, *encoder.parameters()]
    expected = torch.autograd.grad((padded * weights)[mask].sum(), params)
    got = torch.autograd.grad((packed * weights)[mask].sum(), params)
    for e, g in zip(expected, got):
        assert torch.allclose(g, e, atol=1e-5)
    encoder.eval()
    with torch.no_grad():  # eval mode: nn.TransformerEncoder takes its fused fast path
        assert torch.allclose(transform_real_slots(encoder, x, mask)[mask], encoder(x, src_key_padding_mask=~mask)[mask], atol=1e-5)
    pre_norm = torch.nn.TransformerEncoder(
        torch.nn.TransformerEncoderLayer(16, 4, 32, batch_first=True, norm_first=True), 1, enable_nested_tensor=False)
    with pytest.raises(ValueError, match="post-norm"):
        transform_real_slots(pre_norm, x, mask)


@pytest.mark.parametrize("pool_unselected, selector_input", [
    ("exclude", "sentence"), ("zero", "sentence"), ("linear", "sentence"), ("linear", "centred")])
def test_changing_an_unselected_sentence_leaves_the_prediction_unchanged(pool_unselected, selector_input):
    vectors = torch.randn(40, 12)
    model = _network(vectors=vectors, pool_unselected=pool_unselected, selector_input=selector_input)
    ids = torch.tensor([[0, 1, 2, 3, 4, 5]])
    out = model(ids)
    chosen = int(out.rationale_mask[0].argmax())
    changed = 0
    for slot in range(6):
        if slot == chosen:
            continue
        for trial in range(5):
            new_vectors = vectors.clone()
            new_vectors[slot] = torch.randn(12) * 3
            model.sentences.vectors.copy_(new_vectors)
            out2 = model(ids)
            if int(out2.rationale_mask[0].argmax()) != chosen:
                continue  # the selector may move; the claim is about an unselected sentence
            changed += 1
            assert torch.equal(out2.logits, out.logits)
        model.sentences.vectors.copy_(vectors)
    assert changed > 0
    # and the selected sentence does matter
    new_vectors = vectors.clone()
    new_vectors[chosen] = -new_vectors[chosen] * 5
    model.sentences.vectors.copy_(new_vectors)
    assert not torch.equal(model(ids).logits, out.logits)


def test_zero_pooling_gives_unselected_sentences_the_straight_through_gradient():
    """Known answer: slot 0 selected (all features negative), slots 1-2 unselected, slot 3 empty.
    Pooled as zeros, the max of every feature is 0, attained by slots 1-3 (slot 0 is below it), so
    d(w·pooled)/dz_j = (w·v_j) / 3 for them and 0 for slot 0; excluded, the unselected slots get
    no gradient and the selected one gets w·v_0; linear, every slot j gets w·v_j."""
    v = torch.tensor([[[-1.0, -2.0], [3.0, 1.0], [0.5, -4.0], [0.0, 0.0]]])
    w = torch.tensor([2.0, 1.0])
    keep = torch.tensor([[True, False, False, False]])
    for pool, expected in (
        (lambda z: zero_filled_max(v, z), [0.0, 7.0 / 3, -3.0 / 3, 0.0]),
        (lambda z: masked_max(v, z, keep), [-4.0, 0.0, 0.0, 0.0]),
        (lambda z: linear_max(v, z, keep), [-4.0, 7.0, -3.0, 0.0]),  # w·v_j for every slot
    ):
        z = torch.tensor([[1.0, 0.0, 0.0, 0.0]], requires_grad=True)
        pooled = pool(z)
        (pooled @ w).sum().backward()
        assert z.grad[0].tolist() == pytest.approx(expected)
    assert zero_filled_max(v, keep.float()).tolist() == [[0.0, 0.0]]  # max(v_selected, 0): nothing from slots 1-2
    assert linear_max(v, keep.float(), keep).tolist() == [[-1.0, -2.0]]  # v_selected exactly


def test_padding_slots_are_never_selected():
    model = _network(k=3)
    ids = torch.tensor([[0, 1, PAD, PAD, PAD, PAD]])
    out = model(ids)
    assert out.rationale_mask[0].tolist() == [1.0, 1.0, 0.0, 0.0, 0.0, 0.0]


def test_comp_complement_classifier_sees_only_unselected_sentences():
    vectors = torch.randn(40, 12)
    model = _network("comp", vectors=vectors)
    ids = torch.tensor([[0, 1, 2, 3]])
    out = model(ids)
    chosen = int(out.rationale_mask[0].argmax())
    assert out.comp_logits is not None
    # changing the selected sentence's vector while keeping the selection: complement output fixed
    for _ in range(10):
        new_vectors = vectors.clone()
        new_vectors[chosen] = vectors[chosen] * 1.01
        model.sentences.vectors.copy_(new_vectors)
        out2 = model(ids)
        if int(out2.rationale_mask[0].argmax()) == chosen:
            assert torch.equal(out2.comp_logits, out.comp_logits)
            assert not torch.equal(out2.logits, out.logits)
            return
    raise AssertionError("selection moved under a 1% change")


def test_without_positions_the_selector_is_blind_to_sentence_order():
    """positions="none": permuting a document's sentences permutes the scores and leaves the
    prediction unchanged; with the paper's sinusoidal encoding the scores depend on the order."""
    ids = torch.tensor([[0, 1, 2, 3, 4, PAD]])
    perm = torch.tensor([[3, 0, 4, 1, 2, 5]])
    blind = _network(positions="none")
    out, shuffled = blind(ids), blind(ids.gather(1, perm))
    assert torch.allclose(shuffled.scores[0, :5], out.scores[0, perm[0, :5]], atol=1e-5)
    assert torch.allclose(shuffled.logits, out.logits, atol=1e-5)
    for positions in ("sinusoidal", "learned"):
        model = _network(positions=positions)
        if positions == "learned":
            torch.nn.init.normal_(model.learned_positions, std=1.0)
        scores = model(ids).scores
        assert not torch.allclose(model(ids.gather(1, perm)).scores[0, :5], scores[0, perm[0, :5]], atol=1e-3)


def test_contextual_classifier_input_lets_unselected_sentences_change_the_prediction():
    vectors = torch.randn(40, 12)
    model = _network(vectors=vectors, classifier_input="contextual")
    ids = torch.tensor([[0, 1, 2, 3, 4, 5]])
    out = model(ids)
    chosen = int(out.rationale_mask[0].argmax())
    other = (chosen + 1) % 6
    new_vectors = vectors.clone()
    new_vectors[other] = vectors[other] * 1.001
    model.sentences.vectors.copy_(new_vectors)
    out2 = model(ids)
    assert int(out2.rationale_mask[0].argmax()) == chosen
    assert not torch.equal(out2.logits, out.logits)


def test_centred_selector_input_is_each_sentence_minus_its_documents_mean():
    """selector_input="centred": the selector's extra input is centred(h_i − mean of the
    document's real sentences); shifting every sentence of a document by the same vector leaves
    it unchanged, and empty slots get nothing."""
    model = _network(selector_input="centred")
    vectors = model.sentences.vectors
    ids = torch.tensor([[0, 1, 2, PAD], [3, 4, PAD, PAD]])
    mask = ids >= 0
    extra = model._centred(vectors[ids[mask]], mask)
    doc0 = vectors[[0, 1, 2]]
    assert torch.allclose(extra[0, :3], model.centred(doc0 - doc0.mean(0)), atol=1e-6)
    assert torch.equal(extra[0, 3], torch.zeros(16)) and torch.equal(extra[1, 2:], torch.zeros(2, 16))
    assert torch.allclose(model._centred(vectors[ids[mask]] + 5.0, mask), extra, atol=1e-5)
    # the scores see the document: the same sentence scores differently beside other sentences
    plain = _network(selector_input="sentence")
    plain.load_state_dict({k: v for k, v in model.state_dict().items() if not k.startswith("centred")})
    assert not torch.allclose(model(ids).scores[mask], plain(ids).scores[mask])

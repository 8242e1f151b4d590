"""The engine's random generator lent for a block: `using_generator` and `fork_rng`."""

import threading

import numpy as np
import pytest

import engine
from engine import _random
from engine.common import initializer as init


def test_fork_with_a_seed_draws_what_set_seed_would_and_leaves_the_engine_where_it_was():
    engine.set_seed(5)
    expected_next = np.random.default_rng(5).random(3)
    with _random.fork_rng(11):
        inside = init.initializer(init.Normal(1.0), (4,), np.float32).asnumpy()
    engine.set_seed(11)
    assert np.array_equal(inside, init.initializer(init.Normal(1.0), (4,), np.float32).asnumpy())
    engine.set_seed(5)
    with _random.fork_rng(11):
        _random.rng().random(100)
    assert np.array_equal(_random.rng().random(3), expected_next)


def test_fork_without_a_seed_draws_what_the_engine_would_have_and_does_not_move_it():
    engine.set_seed(3)
    with _random.fork_rng():
        forked = _random.rng().random(4)
    after = _random.rng().random(4)
    assert np.array_equal(forked, after)  # the same draws, and the engine had not moved


def test_the_engine_generator_comes_back_when_the_block_raises_and_blocks_nest():
    engine.set_seed(1)
    own = _random.rng()
    with pytest.raises(RuntimeError), _random.fork_rng(2):
        assert _random.rng() is not own
        raise RuntimeError("inside")
    assert _random.rng() is own
    with _random.fork_rng(2) as outer:
        with _random.fork_rng(3) as inner:
            assert _random.rng() is inner
        assert _random.rng() is outer
    assert _random.rng() is own


def test_a_loan_is_seen_by_the_borrowing_thread_only():
    """A training thread drawing Dropout masks meanwhile keeps the engine's generator."""
    engine.set_seed(0)
    own = _random.rng()
    seen = []
    lent = threading.Event()
    done = threading.Event()

    def other_thread():
        lent.wait(5)
        seen.append(_random.rng())
        done.set()

    thread = threading.Thread(target=other_thread)
    thread.start()
    with _random.fork_rng(9) as loan:
        lent.set()
        assert done.wait(5)
        assert _random.rng() is loan
    thread.join(5)
    assert seen == [own]


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="seed"):
        _random.fork_rng(-1)
    with pytest.raises(TypeError, match="Generator"), _random.using_generator(object()):
        pass

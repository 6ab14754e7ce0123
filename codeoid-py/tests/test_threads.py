"""One Memory shared by a thread pool: calls release the GIL and run in parallel."""

from __future__ import annotations

import concurrent.futures
import threading
import time

import codeoid
from helpers import assistant, read_file_exchange, user


def test_many_threads_record_and_read_through_one_memory(memory: codeoid.Memory) -> None:
    sessions = [memory.start_session(f"s{i}") for i in range(8)]

    def work(session: codeoid.Session) -> list[str]:
        ids = []
        for i in range(20):
            ids.append(read_file_exchange(memory, session.id, path=f"src/{session.id}_{i}.rs", content=str(i)))
            memory.timeline(limit=5)
            assert memory.get_episode(ids[-1]).session_id == session.id
        return ids

    with concurrent.futures.ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(work, sessions))
    all_ids = [i for ids in results for i in ids]
    assert len(set(all_ids)) == 8 * 20
    assert all(memory.session(s.id).turn_count == 60 for s in sessions)


def test_blocking_calls_release_the_gil(memory: codeoid.Memory, session: codeoid.Session) -> None:
    # Four half-second commands in four threads take about half a second, not two: the GIL is
    # released while codeoid works.
    start = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
        outs = list(pool.map(lambda _: memory.run(session.id, "sleep 0.5"), range(4)))
    elapsed = time.perf_counter() - start
    assert all(o.exit_code == 0 for o in outs)
    assert elapsed < 1.5, f"4 x 0.5 s took {elapsed:.2f} s: calls are serialized"


def test_python_keeps_running_while_a_call_works(memory: codeoid.Memory, session: codeoid.Session) -> None:
    ticks = 0
    stop = threading.Event()

    def tick() -> None:
        nonlocal ticks
        while not stop.is_set():
            ticks += 1
            time.sleep(0.001)

    ticker = threading.Thread(target=tick)
    ticker.start()
    memory.run(session.id, "sleep 0.3")
    stop.set()
    ticker.join()
    assert ticks > 50, f"the ticker ran only {ticks} times during a 0.3 s call"


def test_close_while_other_threads_work(memory: codeoid.Memory) -> None:
    session = memory.start_session()
    errors: list[BaseException] = []

    def hammer() -> None:
        for i in range(200):
            try:
                memory.record_turn(session.id, user(f"q{i}"))
                memory.record_turn(session.id, assistant(f"a{i}"))
                memory.timeline(limit=3)
            except codeoid.InvalidInputError as err:
                assert "closed" in str(err)
                return
            except BaseException as err:  # anything else is a failure
                errors.append(err)
                return

    threads = [threading.Thread(target=hammer) for _ in range(4)]
    for t in threads:
        t.start()
    time.sleep(0.05)
    memory.close()
    for t in threads:
        t.join()
    assert errors == []
    assert memory.closed

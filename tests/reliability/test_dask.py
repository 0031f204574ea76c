"""Descriptors through a real dask.distributed cluster (docs/processes.md).

One module-scoped LocalCluster: two worker processes on 127.0.0.1 (ports
chosen by the system, dashboards included), one thread each; every wait is bounded
and the cluster is always closed.  The workers can import ``_autoimport_ext``
(tests/ is on their sys.path) but nothing imports it for them: descriptors
of that module reach them through the module hint of their pickle, which
the workers may import because their environment allows that module
(STRIDE_WEAVE_UNPICKLE_IMPORTS, docs/processes.md).
"""
import contextlib
import json
import pickle
import sys
import textwrap

import pytest

from stride_weave.dtypes import DType

distributed = pytest.importorskip("distributed")
dask = pytest.importorskip("dask")

TIMEOUT = 60
# The module the workers may import on unpickle, set in their environment.
WORKER_ENV = {"STRIDE_WEAVE_UNPICKLE_IMPORTS": "_autoimport_ext"}


def _loaded(module):
    return module in sys.modules


def echo(obj):
    return obj


def names_of(mapping):
    return sorted((k.name, v.name) for k, v in mapping.items())


@contextlib.contextmanager
def local_cluster_client():
    """A client of a new two-process LocalCluster, closed on exit."""
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True,
        host="127.0.0.1", dashboard_address=":0", worker_dashboard_address=":0",
        env=WORKER_ENV,
    )
    try:
        with distributed.Client(cluster, timeout=TIMEOUT) as c:
            c.wait_for_workers(2, timeout=TIMEOUT)
            yield c
    finally:
        cluster.close(timeout=TIMEOUT)


@pytest.fixture(scope="module")
def client():
    with local_cluster_client() as c:
        yield c


@pytest.fixture
def fresh_client():
    """A client of a cluster of its own: no other test has sent its workers
    anything."""
    with local_cluster_client() as c:
        yield c


def test_workers_have_not_imported_the_extension(fresh_client):
    # The module is imported on the workers only by unpickling.
    assert set(fresh_client.run(_loaded, "_autoimport_ext").values()) == {False}


def test_builtins_keep_their_identity(client):
    sent = [DType.Float32, DType.Any, DType.E4M3, DType.Bool]
    back = client.submit(echo, sent, pure=False).result(timeout=TIMEOUT)
    assert all(b is s for b, s in zip(back, sent, strict=True))


def test_block_scaled_builtins_keep_their_identity(client):
    sent = [d for d in DType.registered() if type(d).__name__ == "BlockScaledDType"
            and d.name in ("MXFP4", "MXFP8_E4M3", "NVFP4")]
    assert sent
    back = client.gather(client.map(echo, sent, pure=False), errors="raise")
    assert all(b is s for b, s in zip(back, sent, strict=True))


def test_an_extension_not_preloaded_is_imported_on_unpickle(fresh_client):
    import _autoimport_ext as ext

    client = fresh_client
    assert set(client.run(_loaded, "_autoimport_ext").values()) == {False}
    futures = [client.submit(echo, d, pure=False, workers=[w])
               for w in client.scheduler_info()["workers"]
               for d in (ext.FLOAT16, ext.TAGGED, ext.MXFLOAT16)]
    back = client.gather(futures, errors="raise", asynchronous=False)
    assert back == [ext.FLOAT16, ext.TAGGED, ext.MXFLOAT16] * 2
    assert all(b is d for b, d in zip(back, [ext.FLOAT16, ext.TAGGED, ext.MXFLOAT16] * 2,
                                      strict=True))
    assert set(client.run(_loaded, "_autoimport_ext").values()) == {True}


def test_a_task_function_of_the_extension_module(client):
    import _autoimport_ext as ext

    assert client.submit(ext.describe, ext.TAGGED, pure=False).result(
        timeout=TIMEOUT) == ("AI_Tagged", 8)


def test_descriptor_keyed_dicts(client):
    import _autoimport_ext as ext

    mapping = {DType.Float32: ext.MXFLOAT16, ext.TAGGED: DType.MXFP4}
    back = client.submit(echo, mapping, pure=False).result(timeout=TIMEOUT)
    assert back == mapping
    assert all(k is o for k, o in zip(back, mapping, strict=True))
    assert client.submit(names_of, mapping, pure=False).result(timeout=TIMEOUT) == \
        names_of(mapping)


def test_scatter_and_delayed(client):
    import _autoimport_ext as ext

    [scattered] = client.scatter([ext.MXFLOAT16], broadcast=True)
    assert client.submit(echo, scattered, pure=False).result(timeout=TIMEOUT) \
        is ext.MXFLOAT16
    task = dask.delayed(names_of)({ext.TAGGED: DType.E2M1})
    assert client.compute(task).result(timeout=TIMEOUT) == [("AI_Tagged", "E2M1")]
    assert dask.delayed(echo)(DType.NVFP4).compute(scheduler=client) is DType.NVFP4


def test_a_pickle_sent_as_bytes_fails_as_the_task(client):
    import _autoimport_ext as ext

    data = pickle.dumps(ext.TAGGED)
    mismatched = data.replace(b"t1", b"t2")
    future = client.submit(pickle.loads, mismatched, pure=False)
    with pytest.raises(ValueError, match="the pickled structure differs"):
        future.result(timeout=TIMEOUT)
    assert client.submit(echo, DType.Int8, pure=False).result(timeout=TIMEOUT) \
        is DType.Int8


def _client_only_module(tmp_path, monkeypatch):
    """A module that registers an extension, importable here only: call it
    after the cluster's workers started (they copy sys.path when they
    start)."""
    from support import unique_name

    modname = unique_name("sw_client_only").lower()
    name = unique_name("ClientOnly")
    (tmp_path / f"{modname}.py").write_text(textwrap.dedent(f"""
        from stride_weave.dtypes import DType, SimpleDType
        ONLY_HERE = SimpleDType({name!r}, bits=16, supertype=DType.Floating)

        def plain_function(x):
            return x
    """))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, modname, raising=False)
    return __import__(modname)


def test_the_workers_allow_only_the_modules_of_their_policy(fresh_client):
    from stride_weave import _dtypes

    policies = fresh_client.run(_dtypes.unpickle_imports)
    assert len(policies) == 2
    assert all(p[0] == "_autoimport_ext" for p in policies.values()), policies


def test_an_unimportable_extension_sent_as_bytes_fails_as_the_task(
        client, tmp_path, monkeypatch):
    from stride_weave import _dtypes

    client_only_module = _client_only_module(tmp_path, monkeypatch)
    modname = client_only_module.__name__
    data = pickle.dumps(client_only_module.ONLY_HERE)
    future = client.submit(pickle.loads, data, pure=False)
    with pytest.raises(LookupError, match=rf"its module '{modname}' was not imported: "
                                          r"it is not under the allowed module prefixes "
                                          r"\('_autoimport_ext'"):
        future.result(timeout=TIMEOUT)
    # allowed on the workers, it is still not importable there
    previous = client.run(_dtypes.set_unpickle_imports, ("_autoimport_ext", modname))
    try:
        future = client.submit(pickle.loads, data, pure=False)
        with pytest.raises(LookupError, match=rf"its module '{modname}' was not "
                                              rf"imported: no top-level module "
                                              rf"'{modname}' is importable in this "
                                              r"process"):
            future.result(timeout=TIMEOUT)
    finally:
        for worker, setting in previous.items():
            client.run(_dtypes.set_unpickle_imports, setting, workers=[worker])
    assert client.submit(echo, DType.Float64, pure=False).result(timeout=TIMEOUT) \
        is DType.Float64
    assert len(client.scheduler_info()["workers"]) == 2


def test_a_payload_no_worker_can_load_is_a_client_error_not_a_hang(
        tmp_path, monkeypatch):
    """dask.distributed loads a task's arguments in the worker's
    communication layer: a payload it cannot load ends that worker, whatever
    the object (a function of a module the worker cannot import does the
    same).  The client gets KilledWorker (no retries here), never a hang.
    A cluster of its own: this one loses its workers."""
    with dask.config.set({"distributed.scheduler.allowed-failures": 0}), \
            local_cluster_client() as c:
        client_only_module = _client_only_module(tmp_path, monkeypatch)
        future = c.submit(echo, client_only_module.ONLY_HERE, pure=False)
        with pytest.raises(distributed.KilledWorker):
            future.result(timeout=TIMEOUT)
        future = c.submit(client_only_module.plain_function, 1, pure=False)
        with pytest.raises(distributed.KilledWorker):
            future.result(timeout=TIMEOUT)


def _wait_until(predicate, timeout=TIMEOUT):
    """Poll ``predicate`` until it is true, for at most ``timeout`` seconds
    (a bound on the wait, not a performance claim); return its last value."""
    import time

    deadline = time.monotonic() + timeout
    while not (result := predicate()) and time.monotonic() < deadline:
        time.sleep(0.2)
    return result


def test_under_default_settings_a_payload_no_worker_can_load_waits_for_a_worker(
        tmp_path, monkeypatch):
    """What docs/processes.md says happens with Dask's default settings
    (allowed-failures 3): each worker that receives the payload closes, for
    good; once none is left, the task waits for a worker that never comes,
    so the client's result() ends only at its own timeout."""
    with local_cluster_client() as c:
        client_only_module = _client_only_module(tmp_path, monkeypatch)
        future = c.submit(echo, client_only_module.ONLY_HERE, pure=False)
        assert _wait_until(lambda: not c.scheduler_info()["workers"]), \
            "the workers that received the payload are still there"
        assert future.status == "pending"
        with pytest.raises(TimeoutError):
            future.result(timeout=1)


# A script, run as __main__ with a cluster of its own and Dask's default
# settings: descriptors defined in the script reach the workers through
# stride_weave.workers.register_with_dask, those that join later included.
_SCRIPT = '''
import copy, json, logging, sys
from distributed import Client, LocalCluster
from stride_weave import workers
from stride_weave.dtypes import DType, SimpleDType, unpickle_imports

def define():
    return SimpleDType.ensure("DaskScriptFloat12", bits=12, supertype=DType.Floating)

def has_it():
    return any(d.name == "DaskScriptFloat12" for d in DType.registered())

if __name__ == "__main__":
    logging.getLogger("distributed").setLevel(logging.CRITICAL)
    d = define()
    out = {}
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      host="127.0.0.1", dashboard_address=":0",
                      worker_dashboard_address=":0") as cluster, \\
            Client(cluster, timeout=60) as client:
        client.wait_for_workers(2, timeout=60)
        plugin = workers.register_with_dask(client, "json", define=define)
        out["name"] = plugin.name
        out["echo"] = client.submit(copy.copy, d, pure=False).result(timeout=60) is d
        out["both"] = client.gather([client.submit(copy.copy, [d], pure=False, workers=[w])
                                     for w in client.scheduler_info()["workers"]],
                                    errors="raise") == [[d], [d]]
        out["policies"] = sorted(set(client.run(unpickle_imports).values()))
        cluster.scale(3)
        client.wait_for_workers(3, timeout=60)
        out["late_worker"] = sorted(client.run(has_it).values())
        # registering it again (a cell run again) is harmless
        workers.register_with_dask(client, "json", define=define)
        out["again"] = client.submit(copy.copy, d, pure=False).result(timeout=60) is d
    print(json.dumps(out))
'''


def test_register_with_dask_defines_main_descriptors_on_every_worker(tmp_path):
    from support import assert_exited, child_env, run_python

    script = tmp_path / "script.py"
    script.write_text(_SCRIPT)
    proc = run_python([script], env=child_env(), cwd=tmp_path, timeout=240)
    assert_exited(proc)
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out == {"name": "stride_weave.workers:json,define", "echo": True, "both": True,
                   "policies": [["json", "stride_weave.formats"]],
                   "late_worker": [True, True, True], "again": True}


def test_the_dask_plugin_is_a_worker_plugin():
    from stride_weave import workers

    plugin = workers.dask_plugin("json", name="mine")
    assert isinstance(plugin, distributed.WorkerPlugin)
    assert plugin.name == "mine" and plugin.worker_setup.modules == ("json",)
    assert pickle.loads(pickle.dumps(plugin)).worker_setup == plugin.worker_setup


# --- the pre-flight check: stride_weave.workers.check_dask --------------------------
# Names and structures travel as plain data (client.run), so a worker that
# cannot load a descriptor says so and keeps running; the client gets one
# WorkerLoadError naming the workers, what they lack and the remedy.

_CHECK_HEAD = ("check_dask: {n} of {n} workers cannot load what the client would send "
               "them (a task argument a worker cannot load ends that worker):")
_NOT_REGISTERED = ("cannot unpickle descriptor {name!r}: no descriptor is registered under "
                   "that name in this process, and its module {module!r} was not imported: ")


def _not_allowed(name, module):
    """The workers' LookupError for a module their policy does not allow."""
    return (_NOT_REGISTERED.format(name=name, module=module)
            + "it is not under the allowed module prefixes ('_autoimport_ext', "
              "'stride_weave.formats') (allow it with stride_weave.dtypes."
              "set_unpickle_imports, the environment variable STRIDE_WEAVE_UNPICKLE_IMPORTS "
              "or the entry-point group 'stride_weave.unpickle_imports' of its "
              "distribution) (import or register its definition before loading)")


def _check_failure(client, *descriptors):
    from stride_weave import workers

    with pytest.raises(workers.WorkerLoadError) as info:
        workers.check_dask(client, *descriptors)
    return info.value


def _workers(client):
    return sorted(client.scheduler_info()["workers"])


def _made_as(module, name, bits=8):
    """A SimpleDType whose pickle names ``module``: made by code running as
    that module, as a script's or a module's top level makes one."""
    from stride_weave.dtypes import SimpleDType

    namespace = {"__name__": module, "SimpleDType": SimpleDType, "DType": DType}
    exec(f"made = SimpleDType({name!r}, bits={bits}, supertype=DType.Floating)", namespace)
    return namespace["made"]


def _define_on_this_worker(name, bits):
    """Run on the workers: register ``name`` with ``bits`` bits there."""
    from stride_weave.dtypes import SimpleDType

    return SimpleDType.ensure(name, bits=bits, supertype=DType.Floating).name


def test_check_dask_returns_the_workers_when_every_worker_loads_them(client):
    import _autoimport_ext as ext
    from stride_weave import workers

    assert workers.check_dask(client, DType.Float32, DType.NVFP4, ext.TAGGED,
                              ext.MXFLOAT16) == tuple(_workers(client))
    assert workers.check_dask(client) == tuple(_workers(client))


def test_check_dask_names_the_module_the_workers_do_not_allow_and_its_remedy_works(
        tmp_path, monkeypatch):
    from support import unique_name
    from stride_weave import workers

    modname = unique_name("sw_not_allowed").lower()
    name = unique_name("NotAllowed")
    (tmp_path / f"{modname}.py").write_text(textwrap.dedent(f"""
        from stride_weave.dtypes import DType, SimpleDType
        FP12 = SimpleDType({name!r}, bits=12, supertype=DType.Floating)
    """))
    monkeypatch.syspath_prepend(str(tmp_path))   # before the workers start
    module = __import__(modname)
    with local_cluster_client() as c:
        addresses = _workers(c)
        error = _check_failure(c, DType.E4M3, module.FP12)
        assert str(error) == "\n".join([
            _CHECK_HEAD.format(n=2),
            f"- {name!r} (module {modname!r}) on {', '.join(addresses)}: "
            + _not_allowed(name, modname),
            f"  remedy: stride_weave.workers.register_with_dask(client, {modname!r}): it "
            f"allows and imports {modname!r} on every worker, those that join later "
            "included",
        ])
        assert error.missing == {a: (name,) for a in addresses}
        assert _workers(c) == addresses        # nothing was lost
        assert set(c.run(_loaded, modname).values()) == {False}
        workers.register_with_dask(c, modname)   # the remedy, as given
        assert workers.check_dask(c, DType.E4M3, module.FP12) == tuple(addresses)
        assert c.submit(echo, module.FP12, pure=False).result(timeout=TIMEOUT) \
            is module.FP12


def test_check_dask_names_the_module_the_workers_cannot_import(
        client, tmp_path, monkeypatch):
    client_only_module = _client_only_module(tmp_path, monkeypatch)
    modname = client_only_module.__name__
    name = client_only_module.ONLY_HERE.name
    addresses = _workers(client)
    error = _check_failure(client, client_only_module.ONLY_HERE)
    assert str(error) == "\n".join([
        _CHECK_HEAD.format(n=2),
        f"- {name!r} (module {modname!r}) on {', '.join(addresses)}: "
        + _not_allowed(name, modname),
        f"  remedy: install {modname!r} on the workers (a single-file module: "
        f"client.upload_file(path)), then stride_weave.workers.register_with_dask(client, "
        f"{modname!r})",
    ])
    assert _workers(client) == addresses


def test_check_dask_names_a_definition_of_main_and_the_define_remedy(client):
    from support import unique_name

    name = unique_name("MainOnly")
    addresses = _workers(client)
    error = _check_failure(client, DType.Float32, _made_as("__main__", name))
    assert str(error) == "\n".join([
        _CHECK_HEAD.format(n=2),
        f"- {name!r} (module '__main__') on {', '.join(addresses)}: "
        + _NOT_REGISTERED.format(name=name, module="__main__")
        + "__main__ is never imported (import or register its definition before loading)",
        f"  remedy: {name!r} is defined in the client's __main__, which no worker imports: "
        "register it on the workers with stride_weave.workers.register_with_dask(client, "
        "define=f), where f makes it with SimpleDType.ensure(...)",
    ])
    assert error.missing == {a: (name,) for a in addresses}
    assert _workers(client) == addresses


def test_check_dask_names_a_module_that_does_not_register_the_name(client):
    from support import unique_name

    name = unique_name("NotInExt")
    addresses = _workers(client)
    error = _check_failure(client, _made_as("_autoimport_ext", name))
    assert str(error) == "\n".join([
        _CHECK_HEAD.format(n=2),
        f"- {name!r} (module '_autoimport_ext') on {', '.join(addresses)}: cannot "
        f"unpickle descriptor {name!r}: no descriptor is registered under that name in "
        "this process, also after importing its module '_autoimport_ext' (import or "
        "register its definition before loading)",
        "  remedy: the workers' '_autoimport_ext' registers no " + repr(name) + " when "
        "imported: install the client's version of '_autoimport_ext' on the workers, or "
        "register it there with stride_weave.workers.register_with_dask(client, "
        "'_autoimport_ext', define=f)",
    ])
    assert _workers(client) == addresses


def test_check_dask_names_a_different_definition_on_the_workers(client):
    from support import unique_name

    name = unique_name("Differs")
    addresses = _workers(client)
    assert set(client.run(_define_on_this_worker, name, 16).values()) == {name}
    error = _check_failure(client, _made_as("mylib.formats", name, bits=8))
    assert str(error) == "\n".join([
        _CHECK_HEAD.format(n=2),
        f"- {name!r} (module 'mylib.formats') on {', '.join(addresses)}: cannot unpickle "
        f"descriptor {name!r}: the pickled structure differs from the one registered in "
        "this process at "
        "SimpleDType.bits: registered 16 (int), pickle has 8 (int)",
        "  remedy: install the client's version of 'mylib.formats' on the workers",
    ])
    assert _workers(client) == addresses


def test_check_dask_on_a_cluster_without_workers():
    from stride_weave import workers

    with distributed.LocalCluster(n_workers=0, processes=True, host="127.0.0.1",
                                  dashboard_address=":0") as cluster, \
            distributed.Client(cluster, timeout=TIMEOUT) as c:
        error = _check_failure(c, DType.Float32)
    assert str(error) == ("check_dask: the cluster has no worker: nothing could be checked "
                          "(wait for workers with client.wait_for_workers(n) first)")
    assert error.missing == {}
    assert isinstance(error, LookupError) and type(error) is workers.WorkerLoadError


class _RunFails:
    """A client whose workers cannot run the check: client.run(...,
    on_error="return") gives the worker's exception as its result."""

    def run(self, function, *args, on_error):
        assert on_error == "return" and function.__module__ == "stride_weave.workers"
        return {"tcp://10.0.0.2:1": ModuleNotFoundError("No module named 'stride_weave'"),
                "tcp://10.0.0.1:1": ()}


def test_check_dask_names_a_worker_that_cannot_run_the_check():
    from stride_weave import __version__

    error = _check_failure(_RunFails(), DType.Float32, DType.E2M1)
    assert str(error) == "\n".join([
        "check_dask: 1 of 2 workers cannot load what the client would send them (a task "
        "argument a worker cannot load ends that worker):",
        "- the check does not run on tcp://10.0.0.2:1: ModuleNotFoundError: No module "
        "named 'stride_weave'",
        f"  remedy: install stride-weave {__version__} (the client's) on the workers",
    ])
    assert error.missing == {"tcp://10.0.0.2:1": ("Float32", "E2M1")}
    copy = pickle.loads(pickle.dumps(error))
    assert str(copy) == str(error) and copy.missing == error.missing


@pytest.mark.parametrize("bad", ["Float32", DType.Float32.structure(), None])
def test_check_dask_refuses_what_is_not_a_descriptor_before_sending_anything(bad):
    from stride_weave import workers

    class NoRun:
        def run(self, *args, **kwargs):
            raise AssertionError("nothing is sent")

    with pytest.raises(TypeError) as info:
        workers.check_dask(NoRun(), DType.Float32, bad)
    assert str(info.value) == ("check_dask: descriptors must be DType instances, got an "
                               f"object of type {type(bad).__qualname__} (argument 3)")

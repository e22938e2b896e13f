"""The viewer's HTTP routes: bad input gets a clear answer, files stay inside their folder,
corrections are appended, transcript images are served from the log."""

from __future__ import annotations

import json
from pathlib import Path

from starlette.testclient import TestClient

from tests.viewer.results import MINI, MINI_AGENT_RUNS, make_results
from viewer.server import build_app, open_viewer
from viewer.source import open_source

MOBILE = "android-markor-shopping-note--wrong-name-fail"


async def test_routes_answer_and_refuse_as_documented(tmp_path: Path) -> None:
    results = await make_results(MINI, tmp_path / "mini", MINI_AGENT_RUNS, only=MINI_AGENT_RUNS)
    viewer = open_viewer(open_source(results), None)
    assert viewer.index.wait(30)
    client = TestClient(build_app(viewer), base_url="http://127.0.0.1")

    info = client.get("/api/info").json()
    assert info["rows"] == 2 * len(MINI_AGENT_RUNS)
    assert info["kind"] == "results"
    assert client.get("/api/runs?sort=nothing").status_code == 400
    assert client.get("/api/run/no-such-key").status_code == 404
    assert client.get("/files/trajectories/../dataset.json").status_code == 404
    assert client.get("/files/trajectories/%2e%2e/dataset.json").status_code == 404
    shot = client.get(f"/files/trajectories/{MOBILE}/step_1.png")
    assert shot.status_code == 200
    assert shot.content == (MINI / "trajectories" / MOBILE / "step_1.png").read_bytes()

    key = next(
        r["key"]
        for r in client.get("/api/runs?mode=agent&limit=10").json()["rows"]
        if r["trajectory_id"] == MOBILE
    )
    run = client.get(f"/api/run/{key}").json()
    images = [
        block["url"]
        for entry in run["transcript"]
        for block in entry.get("content") or []
        if block["type"] == "image"
    ]
    assert images, "the mobile run's prompt carries the last screenshot"
    image = client.get(images[0])
    assert image.status_code == 200
    assert image.content.startswith(b"\x89PNG")
    redirect = client.get(f"/logs/{key}.jsonl", follow_redirects=False)
    assert (redirect.status_code, redirect.headers["location"]) == (302, f"/run/{key}")
    raw = client.get(f"/logs/{key}.jsonl?raw=1")
    assert json.loads(raw.text.splitlines()[0])["event"] == "start"

    assert client.post("/api/corrections", json={"label": "PASS"}).status_code == 400
    # A form post (no JSON type) and another host name are refused.
    form = client.post(
        "/api/corrections",
        content=json.dumps({"trajectory_id": MOBILE, "label": "PASS"}),
        headers={"content-type": "text/plain"},
    )
    assert form.status_code == 415
    assert client.get("/api/info", headers={"host": "attacker.example"}).status_code == 400
    assert (
        client.post(
            "/api/corrections", json={"trajectory_id": MOBILE, "label": "MAYBE"}
        ).status_code
        == 400
    )
    assert (
        client.post("/api/corrections", json={"trajectory_id": "nope", "label": "PASS"}).status_code
        == 404
    )
    assert not viewer.source.corrections.exists()
    saved = client.post(
        "/api/corrections", json={"trajectory_id": MOBILE, "label": "PASS", "note": "n"}
    )
    assert saved.status_code == 200
    lines = viewer.source.corrections.read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["previous"] for line in lines] == ["FAIL"]
    assert client.get(f"/api/runs?wrong=1&q={MOBILE}").json()["total"] == 1  # now the llm run


def test_a_dataset_alone_lists_trajectories_and_keeps_corrections_out_of_its_tree(
    tmp_path: Path,
) -> None:
    import shutil

    copy = tmp_path / "mini"
    shutil.copytree(MINI, copy)
    viewer = open_viewer(open_source(copy), None)
    client = TestClient(build_app(viewer), base_url="http://127.0.0.1")
    rows = client.get("/api/runs?limit=100").json()["rows"]
    assert {row["trajectory_id"] for row in rows} == {
        path.stem for path in (copy / "trajectories").glob("*.json")
    }
    assert all(row["kind"] == "trajectory" for row in rows)
    page = client.get(f"/api/trajectory/{MOBILE}").json()
    assert len(page["steps"]) == 7
    assert page["steps"][0]["screenshot_url"] == f"/files/trajectories/{MOBILE}/step_1.png"
    assert page["runs"] == []
    saved = client.post("/api/corrections", json={"trajectory_id": MOBILE, "label": "PASS"})
    assert saved.status_code == 200
    assert viewer.source.corrections.is_file()
    assert not viewer.source.corrections.is_relative_to(tmp_path)
    assert sorted(path.name for path in copy.iterdir()) == sorted(
        path.name for path in MINI.iterdir()
    )

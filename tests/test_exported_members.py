import overseer


def test_public_surface() -> None:
    assert sorted(overseer.__all__) == sorted(
        [
            "ACTIONS",
            "Action",
            "AuditStore",
            "BaseScorer",
            "CompositeScorer",
            "ConfigError",
            "FinalAnswer",
            "LifecycleError",
            "Message",
            "MissingDependencyError",
            "Observation",
            "Overseer",
            "OverseerError",
            "Plan",
            "Policy",
            "PolicyError",
            "Provenance",
            "Review",
            "RulesScorer",
            "Score",
            "ScoreRequest",
            "ScorerError",
            "ScorerTimeoutError",
            "Step",
            "StepScorer",
            "StoreError",
            "Telemetry",
            "ToolCall",
            "ToolChange",
            "Trajectory",
            "TrajectoryFormatError",
            "TrajectoryHandle",
            "Verdict",
            "__version__",
            "load_policy",
            "read_trajectories",
        ]
    )
    for name in overseer.__all__:
        assert getattr(overseer, name) is not None


def test_import_loads_no_heavy_dependency() -> None:
    import subprocess
    import sys

    code = "import sys, overseer; print(sorted(m for m in ('torch', 'transformers', 'langgraph', 'langchain_core') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"

"""``overseer detector``: build the training documents, train the injection detector, evaluate on unseen sources."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import click
from rich.table import Table

from overseer.cli._common import console, fail, handle_errors

__all__ = ["detector_group"]

_SOURCES = "injecagent,bipia,spikee,tasktracker,llmail,tooltalk,tau_bench,asb,probes,everyday_a,everyday_b,everyday_c,everyday_d,everyday_e,everyday_f,everyday_g,everyday_h,everyday_i,everyday_j,everyday_k,everyday_l,everyday_calls_a_c,everyday_calls_d_l,everyday_disguised,everyday_runs_m,everyday_runs_n,everyday_runs_o,everyday_runs_p,everyday_runs_q,everyday_runs_r,everyday_runs_s,everyday_runs_t,everyday_runs_u,everyday_runs_v,everyday_runs_w,everyday_runs_x,everyday_runs_y,everyday_runs_z,everyday_runs_aa,everyday_runs_ab,everyday_runs_ac,everyday_runs_ad,everyday_runs_ae,everyday_runs_af,everyday_runs_ag,everyday_runs_ah,everyday_runs_ai,everyday_runs_aj,everyday_runs_ak,everyday_runs_al,everyday_runs_am,everyday_runs_an,everyday_runs_ao,everyday_runs_ap,everyday_runs_aq,everyday_runs_ar,everyday_runs_as,everyday_runs_at,everyday_runs_au,everyday_runs_av,everyday_runs_aw,everyday_runs_ax,everyday_runs_ay,everyday_runs_az,everyday_runs_ba,everyday_runs_bb,everyday_runs_bc,everyday_runs_bd,everyday_runs_be,everyday_runs_bf,everyday_runs_bg,everyday_runs_bh,everyday_runs_bi,everyday_runs_bj,everyday_runs_bk,everyday_runs_bl,everyday_runs_bm,everyday_runs_bn,everyday_runs_bo,everyday_runs_bp,everyday_runs_bq,everyday_runs_br,everyday_runs_bs,everyday_runs_bt,everyday_runs_bu,everyday_runs_bv,everyday_runs_bw,everyday_runs_bx,everyday_runs_by,everyday_runs_bz,everyday_runs_ca,everyday_runs_cb,everyday_runs_cc,everyday_runs_cd,everyday_runs_ce,everyday_runs_cf,everyday_runs_cg,everyday_runs_ch,everyday_runs_ci,everyday_runs_cj,everyday_runs_ck,everyday_runs_cl,everyday_runs_cm,everyday_runs_cn,everyday_runs_co,everyday_runs_cp,everyday_runs_cq,everyday_runs_cr,everyday_runs_cs,everyday_runs_ct,everyday_runs_cu,everyday_runs_cv,everyday_runs_cw,everyday_runs_cx,everyday_runs_cy,everyday_runs_cz,everyday_runs_da,everyday_runs_db,everyday_runs_dc,everyday_runs_dd,everyday_runs_de,everyday_runs_df,everyday_runs_dg,everyday_runs_dh,everyday_runs_di,everyday_runs_dj,everyday_runs_dk,everyday_runs_dl,everyday_runs_dm,everyday_runs_dn,everyday_runs_do,everyday_runs_dp,everyday_runs_dq,everyday_runs_dr,everyday_runs_ds,everyday_runs_dt,everyday_runs_du,everyday_runs_dv,everyday_runs_dw,everyday_runs_dx,everyday_runs_dy,everyday_runs_dz,everyday_runs_ea,everyday_runs_eb,everyday_runs_ec,everyday_runs_ed,everyday_runs_ee,everyday_runs_ef,everyday_runs_eg,everyday_runs_eh,everyday_runs_ei,everyday_runs_ej,everyday_runs_ek,everyday_runs_el,everyday_runs_em,everyday_runs_en,everyday_runs_eo,everyday_runs_ep,everyday_runs_eq,everyday_runs_er,everyday_runs_es,everyday_runs_et,everyday_runs_eu,everyday_runs_ev,everyday_runs_ew,everyday_runs_ex,everyday_runs_ey,everyday_runs_ez,everyday_runs_fa,everyday_runs_fb,everyday_runs_fc,everyday_runs_fd,everyday_runs_fe,everyday_runs_ff,everyday_runs_fg,everyday_runs_fh,everyday_runs_fi,everyday_runs_fj,everyday_runs_fk,everyday_runs_fl,everyday_runs_fm,everyday_runs_fn,everyday_runs_fo,everyday_runs_fp,everyday_runs_fq,everyday_runs_fr,everyday_runs_fs,everyday_runs_ft,everyday_runs_fu,everyday_runs_fv,everyday_runs_fw,everyday_runs_fx,everyday_runs_fy,everyday_runs_fz,everyday_runs_ga,everyday_runs_gb,everyday_runs_gc,everyday_runs_gd,everyday_runs_ge,everyday_runs_gf,everyday_runs_gg,everyday_runs_gh,everyday_runs_gi,everyday_runs_gj,everyday_runs_gk,everyday_runs_gl,everyday_runs_gm,everyday_runs_gn,everyday_runs_go,everyday_runs_gp,everyday_runs_gq,everyday_runs_gr,everyday_runs_gs,everyday_runs_gt,everyday_runs_gu,everyday_runs_gv"


@click.group("detector")
def detector_group() -> None:
    """The injection detector: which characters of a tool's output address the agent."""


@detector_group.command("data")
@click.option("--shared", type=click.Path(exists=True, file_okay=False, path_type=Path), default=Path("../shared/datasets"),
              show_default=True, help="The public datasets folder.")  # fmt: skip
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--composed", type=int, default=24000, show_default=True, help="How many composed documents.")
@click.option("--notices", type=int, default=6000, show_default=True,
              help="How many composed service messages (the second round's hard negatives; 0: the first round's set).")  # fmt: skip
@click.option("--requests", type=int, default=6000, show_default=True,
              help="How many composed requests between people (the third round's hard negatives; 0: the second's set).")  # fmt: skip
@click.option("--goals", type=int, default=6000, show_default=True,
              help="How many goals addressed to the agent or to a person (the fourth round; 0: the third's set).")  # fmt: skip
@click.option("--records", type=int, default=8000, show_default=True,
              help="How many structured outputs: records as YAML, JSON, repr (the fifth round; 0: the fourth's set).")  # fmt: skip
@click.option("--about", type=int, default=0, show_default=True,
              help="How many texts about AI, half with a passage to it (a sixth round, not shipped; 6000 was tried).")  # fmt: skip
@click.option("--third", type=int, default=0, show_default=True,
              help="How many texts with passages obliging the AI in the third person, or about AI (a seventh round).")  # fmt: skip
@click.option("--turns", type=int, default=0, show_default=True,
              help="How many texts with forged conversation turns, or real transcripts and warnings (an eighth round).")  # fmt: skip
@click.option("--receipts", type=int, default=0, show_default=True,
              help="How many answers of tools that changed something (payments, sends, bookings; a ninth round).")  # fmt: skip
@click.option("--requirements", type=int, default=0, show_default=True,
              help="How many service answers with requirements laid on automated clients, or notes for people (a tenth round).")  # fmt: skip
@click.option("--voices", type=int, default=0, show_default=True,
              help="How many texts with forged consent, pleas to whoever manages, bare orders, gates, or the same voices to people (an eleventh round).")  # fmt: skip
@click.option("--roles", type=int, default=0, show_default=True,
              help="How many texts with instructions to software named by its job, or the same words for people (a twelfth round).")  # fmt: skip
@click.option("--machine", type=int, default=0, show_default=True,
              help="How many command-line outputs, forwarded mails and example prompts, half with a passage (a fourteenth round).")  # fmt: skip
@click.option("--out", type=click.Path(path_type=Path), required=True, help="JSON Lines (.gz) of documents.")
@handle_errors
def data(
    shared: Path,
    seed: int,
    composed: int,
    notices: int,
    requests: int,
    goals: int,
    records: int,
    about: int,
    third: int,
    turns: int,
    receipts: int,
    requirements: int,
    voices: int,
    roles: int,
    machine: int,
    out: Path,
) -> None:
    """Write the training documents (composed + the training parts of the public corpora)."""
    from overseer.lab.detector.sources import training_docs

    docs = training_docs(
        shared,
        seed=seed,
        composed=composed,
        notices=notices,
        requests=requests,
        goals=goals,
        records=records,
        about=about,
        third=third,
        turns=turns,
        receipts=receipts,
        requirements=requirements,
        voices=voices,
        roles=roles,
        machine=machine,
    )
    opener: Any = gzip.open if out.suffix == ".gz" else open
    with opener(out, "wt", encoding="utf-8") as handle:
        for doc in docs:
            handle.write(json.dumps(doc, ensure_ascii=False) + "\n")
    console.print(f"{len(docs)} documents ({sum(1 for d in docs if d['spans'])} injected) -> {out}")


@detector_group.command("train", context_settings={"ignore_unknown_options": True})
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def train(args: tuple[str, ...]) -> None:
    """Train a detector: DOCS... --out DIR [--epochs 3 --batch-size 64 --lr 8e-5 --seed 0 --device auto]."""
    from overseer.lab.detector.train import main

    main(list(args))


@detector_group.command("average")
@click.argument("first", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.argument("second", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--weight", type=click.FloatRange(0.0, 1.0), default=0.5, show_default=True,
              help="The second detector's share.")  # fmt: skip
@click.option("--out", type=click.Path(path_type=Path), required=True, help="The averaged detector's directory.")
@handle_errors
def average(first: Path, second: Path, weight: float, out: Path) -> None:
    """Average two detectors' weights (trained from one start): (1 - weight) * FIRST + weight * SECOND."""
    from overseer.lab.detector.train import average as average_weights

    average_weights(first, second, out, weight)
    console.print(f"{out}: {1 - weight:g} x {first} + {weight:g} x {second}")


@detector_group.command("eval")
@click.option("--policy", default="default", show_default=True, help="The policy to replay every source under.")
@click.option("--shared", type=click.Path(exists=True, file_okay=False, path_type=Path), default=Path("../shared/datasets"),
              show_default=True, help="The public datasets folder.")  # fmt: skip
@click.option("--sources", default=_SOURCES, show_default=True, help="Comma-separated sources.")
@click.option("--asb-runs", type=int, default=400, show_default=True, help="ASB held-out runs sampled (seeded).")
@click.option("--concurrency", type=int, default=8, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print the rows as JSON.")
@handle_errors
def evaluate(policy: str, shared: Path, sources: str, asb_runs: int, concurrency: int, as_json: bool) -> None:
    """Replay every unseen source under a whole policy; one row per source (never one pooled figure)."""
    from overseer.lab.detector.evaluate import detector_at_equal_false_positives, evaluate_sources, spikee_detectors
    from overseer.lab.detector.sources import eval_sets
    from overseer.policy import load_policy

    wanted = [s.strip() for s in sources.split(",") if s.strip()]
    sets = eval_sets(shared, Path.cwd(), asb_runs=asb_runs)
    unknown = [s for s in wanted if s not in sets]
    if unknown:
        fail(f"unknown source(s) {', '.join(unknown)}; known: {', '.join(sets)}")
    rows = evaluate_sources(policy, {name: sets[name] for name in wanted}, concurrency)
    if as_json:
        out: dict[str, Any] = {"policy": policy, "sources": rows}
        if "spikee" in wanted:
            out["spikee_detectors"] = spikee_detectors(shared)
            spec = load_policy(policy).scorers.get("detector")
            if spec is not None:
                from overseer._threads import cpu_precision

                model, precision = getattr(spec, "model", "default"), getattr(spec, "cpu_precision", "float32")
                out["spikee_detector_at_equal_false_positives"] = detector_at_equal_false_positives(
                    sets["spikee"], model, cpu_precision(precision)
                )
        click.echo(json.dumps(out, indent=2))
        return
    table = Table(title=f"unseen sources under policy {policy}")
    for column in ("source", "injected outputs caught", "hijacked calls stopped", "benign calls blocked",
                   "benign outputs blocked/sanitised", "benign runs interrupted", "benign runs flagged"):  # fmt: skip
        table.add_column(column, justify="right" if column != "source" else "left")

    def frac(a: int, b: int) -> str:
        return f"{a}/{b} ({100 * a / b:.1f}%)" if b else "-"

    for name, r in rows.items():
        table.add_row(
            name,
            frac(r["injected_caught"], r["injected_outputs"]),
            frac(r["hijacked_stopped"], r["hijacked_calls"])
            + (
                f"; after an output {r['hijacked_after_output_stopped']}/{r['hijacked_after_output']}"
                if r["hijacked_after_output"] != r["hijacked_calls"]
                else ""
            ),
            frac(r["benign_calls_blocked"], r["benign_calls"]),
            frac(r["benign_outputs_removed"], r["benign_outputs"]),
            frac(r["benign_runs_interrupted"], r["benign_runs"]),
            frac(r["benign_runs_flagged"], r["benign_runs"]),
        )
    console.print(table)

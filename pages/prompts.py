"""Prompts: discrimination and thresholds of every prompt, its curves and its texts."""

import numpy as np
import streamlit as st

from lib.inference.settings import gives_posterior
from lib.io.export import csv_text
from lib.irt.contraction import UNINFORMED_BELOW
from lib.irt.summary import prompt_table
from lib.plots.irt import category_curves, expected_rating_band, information_curves
from ui.common import current_fit, current_input
from ui.navigation import serve_through_app
from ui.tables import show_table
from ui.text import escape_markdown

serve_through_app()  # opened by its URL on a fresh server, the page runs alone: app.py serves it

st.title("Prompts")
st.caption(
    "alpha_j (discrimination): how sharply prompt j separates better from worse systems; "
    "b_j (thresholds, logits): where on the ability scale each net rating becomes likely."
)
data = current_input()
fit = current_fit(data) if data is not None else None
if data is not None and fit is None:
    st.info("Fit the model on the **Abilities** page first.")
if fit is not None:
    rm = data.matrix
    if not gives_posterior(fit.diagnostics.sampler):
        st.warning("MAP preview: discriminations are point estimates without intervals.")
    table = prompt_table(fit, rm)
    weak = table["alpha_contraction"] < UNINFORMED_BELOW
    if weak.any():
        st.warning(
            f"The data do not inform the discrimination of {weak.sum()} of {len(table)} "
            f"prompts (contraction of log alpha below {UNINFORMED_BELOW}, column "
            "`alpha_contraction`): their alpha is the prior's, and their ranking by alpha "
            "means nothing. More comparisons per prompt are needed."
        )
    shown = table.assign(b_mean=table["b_mean"].map(lambda b: ", ".join(f"{x:.2f}" for x in b)))
    show_table(shown.sort_values("alpha_mean", ascending=False), key="prompts_table")
    st.download_button(
        "prompts.csv", csv_text(table.drop(columns="b_mean")), "prompts.csv", mime="text/csv", key="prompts_dl"
    )

    post = fit.idata.posterior
    alpha = post["alpha"].transpose("chain", "draw", "prompt").to_numpy().reshape(-1, rm.shape[1])
    b = post["b"].transpose("chain", "draw", "prompt", "threshold").to_numpy()
    b = b.reshape(-1, *b.shape[2:])
    order = table.sort_values("alpha_mean", ascending=False)["prompt_id"].tolist()
    pid = st.selectbox(
        "Prompt", order, key="prompts_choice", help="sorted by discrimination, most discriminating first"
    )
    j = int(np.flatnonzero(rm.prompt_ids == pid)[0])
    c = st.columns(2)
    c[0].plotly_chart(category_curves(alpha[:, j].mean(), b[:, j].mean(axis=0), rm.categories), key="prompts_ccc")
    c[1].plotly_chart(expected_rating_band(alpha[:, j], b[:, j], rm.categories), key="prompts_band")
    st.plotly_chart(information_curves(alpha.mean(axis=0), b.mean(axis=0), prompt=j), key="prompts_info")

    j_data = data.judgments
    if j_data is not None and not j_data.prompt_texts.empty:
        members = rm.groups.loc[rm.groups["group"] == pid, "prompt_id"].tolist()
        texts = j_data.prompt_texts.set_index("prompt_id")["prompt_text"]
        st.subheader("Prompt text")
        for m in members:
            st.text(texts.get(m, "(no text)"))
        comp = st.selectbox("Responses of comparison", rm.comparisons["comparison"], key="prompts_comp")
        row = rm.comparisons.set_index("comparison").loc[comp]
        resp = j_data.responses
        has_responses = "response" in resp.columns and resp["response"].fillna("").astype(str).ne("").any()
        if not has_responses:
            st.caption("No response column mapped: responses cannot be shown.")
        c = st.columns(2)
        for col, system in zip(c, [row["system_a"], row["system_b"]], strict=True):
            col.markdown(f"**{'A' if system == row['system_a'] else 'B'}: {escape_markdown(system)}**")
            if has_responses:
                hit = resp[(resp["prompt_id"] == members[0]) & (resp["system"] == system)]["response"]
                col.text(hit.iloc[0] if len(hit) and hit.iloc[0] else "(empty response)")

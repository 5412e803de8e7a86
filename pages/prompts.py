"""Prompts: discrimination and thresholds of every prompt, its curves and its texts."""

import numpy as np
import streamlit as st

from lib.irt.summary import prompt_table
from lib.plots.irt import category_curves, expected_rating_band, information_curves
from pages.common import current_fit, current_input

st.title("Prompts")
st.caption("alpha_j (discrimination): how sharply prompt j separates better from worse systems; "
           "b_j (thresholds, logits): where on the ability scale each net rating becomes likely.")
data = current_input()
fit = current_fit(data) if data is not None else None
if data is not None and fit is None:
    st.info("Fit the model on the **Abilities** page first.")
if fit is not None:
    rm = data.matrix
    if fit.diagnostics.sampler == "map":
        st.warning("MAP preview: discriminations are point estimates without intervals.")
    table = prompt_table(fit, rm)
    shown = table.assign(b_mean=table["b_mean"].map(lambda b: ", ".join(f"{x:.2f}" for x in b)))
    st.dataframe(shown.sort_values("alpha_mean", ascending=False).round(3), hide_index=True,
                 key="prompts_table")
    st.download_button("prompts.csv", table.drop(columns="b_mean").to_csv(index=False),
                       "prompts.csv", mime="text/csv", key="prompts_dl")

    post = fit.idata.posterior
    alpha = post["alpha"].transpose("chain", "draw", "prompt").to_numpy().reshape(-1, rm.shape[1])
    b = post["b"].transpose("chain", "draw", "prompt", "threshold").to_numpy()
    b = b.reshape(-1, *b.shape[2:])
    order = table.sort_values("alpha_mean", ascending=False)["prompt_id"].tolist()
    pid = st.selectbox("Prompt", order, key="prompts_choice",
                       help="sorted by discrimination, most discriminating first")
    j = int(np.flatnonzero(rm.prompt_ids == pid)[0])
    c = st.columns(2)
    c[0].plotly_chart(category_curves(alpha[:, j].mean(), b[:, j].mean(axis=0), rm.categories),
                      key="prompts_ccc")
    c[1].plotly_chart(expected_rating_band(alpha[:, j], b[:, j], rm.categories), key="prompts_band")
    st.plotly_chart(information_curves(alpha.mean(axis=0), b.mean(axis=0), prompt=j),
                    key="prompts_info")

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
        c = st.columns(2)
        for col, system in zip(c, [row["system_a"], row["system_b"]], strict=True):
            hit = resp[(resp["prompt_id"] == members[0]) & (resp["system"] == system)]["response"]
            col.markdown(f"**{'A' if system == row['system_a'] else 'B'}: {system}**")
            col.text(hit.iloc[0] if len(hit) and hit.iloc[0] else "(empty response)")

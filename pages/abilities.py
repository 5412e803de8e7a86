"""Abilities: fit the graded response model and show theta per comparison (Sedoc & Ungar, Fig. 1)."""

import streamlit as st

from lib.errors import InputError
from lib.inference.diagnostics import NOT_CONVERGED, diagnostics_json
from lib.inference.settings import TARGET_CHUNK, gives_posterior
from lib.io.export import csv_text
from lib.irt.contraction import UNINFORMED_BELOW
from lib.irt.data_checks import auto_cutpoints
from lib.irt.fit import fit_grm, netcdf_bytes
from lib.irt.settings import CUTPOINTS, DECISION_NOTE, SAMPLERS, FitSettings, fit_settings
from lib.irt.summary import ability_table
from lib.plots.irt import ability_density, ability_forest
from ui.common import current_fit, current_input
from ui.keys import ABIL_SAMPLER, FIT, FIT_SETTINGS
from ui.navigation import serve_through_app
from ui.tables import show_table
from ui.text import escape_markdown
from ui.timings import run_start, server_time_text, show_timings, stopped_words

serve_through_app()  # opened by its URL on a fresh server, the page runs alone: app.py serves it

started = run_start()  # the run a click began (app.py's first step)

# More density curves than this in one chart are unreadable.
MAX_DENSITIES = 30


def _options_help(helps: dict[str, str]) -> str:
    return "  \n".join(f"**{name}**: {escape_markdown(text)}" for name, text in helps.items())


# The fit's sizes and the keys of their widgets (a comment: a bare string here is shown by Streamlit).
SIZES = {
    "chains": "abil_chains",
    "draws": "abil_draws",
    "tune": "abil_tune",
    "target_ess": "abil_target",
    "seed": "abil_seed",
}


def _sampler_sizes() -> None:
    """The sampler just chosen: its draws, tuning and target ESS as ``python -m lib fit --sampler ...`` takes
    them when none are given (``fit_settings``: pymc draws 1,000; numpyro samples to a target, at most
    3,000); the chains and seed stay."""
    chosen = fit_settings(sampler=st.session_state[ABIL_SAMPLER])
    for field in ("draws", "tune", "target_ess"):
        st.session_state[SIZES[field]] = getattr(chosen, field) or 0


def settings_form(data) -> tuple[FitSettings, bool]:
    old = st.session_state[FIT_SETTINGS]
    for field, key in SIZES.items():  # the last fit's, until the user or a new sampler changes them
        st.session_state.setdefault(key, getattr(old, field) or 0)
    # Open until a fit exists; the key keeps it as the user left it when that changes (without one, the
    # first rerun after a fit, e.g. the user's next setting, made a new closed expander under the user).
    with st.expander("Fit settings", expanded=current_fit(data) is None, key="abil_settings"):
        c = st.columns(7)
        samplers, cuts = list(SAMPLERS), list(CUTPOINTS)
        sampler = c[0].selectbox(
            "Sampler",
            samplers,
            index=samplers.index(old.sampler) if old.sampler in SAMPLERS else 0,
            key=ABIL_SAMPLER,
            on_change=_sampler_sizes,
            help=_options_help({s.name: s.help for s in SAMPLERS.values()}),
        )
        cutpoints = c[1].selectbox(
            "Cutpoints",
            cuts,
            index=cuts.index(auto_cutpoints(data.matrix, data.fmt)),
            key="abil_cutpoints",
            help=_options_help(CUTPOINTS) + "  \nThe default follows the format and the design: shared "
            "when the prompts have too few rated comparisons to inform their own thresholds.",
        )
        chains = c[2].number_input("Chains", 1, 8, key="abil_chains")
        draws = c[3].number_input(
            "Draws", 50, 10000, step=100, key="abil_draws", help="per chain; with a target ESS, the most"
        )
        tune = c[4].number_input("Tuning", 0, 10000, step=100, key="abil_tune")
        target = c[5].number_input(
            "Target ESS",
            0,
            100_000,
            step=100,
            key="abil_target",
            disabled=not SAMPLERS[sampler].to_target,
            help=f"numpyro: warm up from jittered points around the priors' centres, then draw {TARGET_CHUNK} per "
            "chain at a time until the bulk "
            "and tail ESS of every theta, alpha and b reach it and their R-hat is at most 1.01 (or Draws per chain "
            "are drawn); 0: exactly Draws.",
        )
        seed = c[6].number_input("Seed", 0, 2**31 - 1, key="abil_seed")
    settings = FitSettings(
        cutpoints=cutpoints,
        sampler=sampler,
        chains=int(chains),
        draws=int(draws),
        tune=int(tune),
        seed=int(seed),
        target_ess=int(target) if target and SAMPLERS[sampler].to_target else None,
    )
    st.session_state[FIT_SETTINGS] = settings
    return settings, st.button("Fit", type="primary", key="abil_fit")


def run_fit(data, settings: FitSettings):
    bar = st.progress(0.0, text="starting")
    with st.status(f"Fitting with {settings.sampler}…", expanded=True) as status:
        fit = fit_grm(data.matrix, settings, remember=True, progress=lambda f, msg: bar.progress(min(f, 1.0), text=msg))
        status.update(label="Fitted", state="complete", expanded=False)
    bar.empty()
    return fit


def show_diagnostics(fit) -> None:
    d = fit.diagnostics
    failed = [w for w in d.warnings if w.startswith(NOT_CONVERGED)]
    if failed:
        st.error(
            "**This fit has not converged**: the abilities, intervals and probabilities below are "
            "not to be reported. Fit again with more chains, tuning iterations and draws.  \n"
            + "  \n".join(escape_markdown(w) for w in failed)
        )
    for w in d.warnings:
        if w not in failed:
            st.warning(escape_markdown(w))
    if gives_posterior(d.sampler):
        c = st.columns(5)
        c[0].metric("max R-hat", f"{d.rhat_max:.3f}")
        c[1].metric("min bulk ESS", f"{d.ess_bulk_min:.0f}")
        c[2].metric("min tail ESS", f"{d.ess_tail_min:.0f}")
        c[3].metric("divergences", d.divergences)
        c[4].metric(
            "fit time",
            f"{d.wall_s:.1f} s",
            help="from the start of the fit to its result, model building and compilation included",
        )
    if d.stopped is not None:
        st.caption(f"Sampled to the target ESS {d.target_ess}: {d.draws} draws per chain, {stopped_words(d.stopped)}.")
    show_timings(d.timings)


st.title("Abilities")
st.caption(
    "Graded response model (Sedoc & Ungar 2020): theta_i is comparison i's ability in "
    "logits; theta > 0 means system B is better than A, 0 means equally good."
)
data = current_input()
if data is not None:
    settings, clicked = settings_form(data)
    fit = current_fit(data)
    if clicked:
        try:
            fit = run_fit(data, settings)
        except InputError as err:
            st.error(f"Cannot fit: {escape_markdown(err)}")
            fit = None
        st.session_state[FIT] = fit
    if fit is None and not clicked:
        st.info(
            "No fit for this data and these settings yet: press **Fit**. A MAP preview takes "
            "about a second (several seconds the first time, to compile); the full posterior "
            "(numpyro, 4 chains) a minute or more."
        )
    elif fit is not None:
        s = fit.settings
        sizes = (
            f"{s.draws} draws" if s.target_ess is None else f"at most {s.draws} draws to the target ESS {s.target_ess}"
        )
        st.caption(
            f"Showing the fit with {s.sampler}, {s.cutpoints} cutpoints, {s.chains} chains x "
            f"{sizes} ({s.tune} tuning), seed {s.seed}."
        )
        show_diagnostics(fit)
        table = ability_table(fit, data.matrix)
        point_only = not gives_posterior(fit.diagnostics.sampler)
        weak = table.loc[table["contraction"] < UNINFORMED_BELOW, "comparison"]
        if len(weak):
            st.warning(
                f"The data do not inform the ability of {len(weak)} of {len(table)} "
                f"comparisons (contraction below {UNINFORMED_BELOW}, column `contraction`): "
                + escape_markdown(", ".join(map(str, weak)))
            )
        if not point_only and len(table) > MAX_DENSITIES:
            st.caption(
                f"{len(table)} comparisons (or persons): too many density curves to read; "
                "see the forest plot and the table."
            )
        elif not point_only:
            th = fit.idata.posterior["theta"].transpose("chain", "draw", "comparison").to_numpy()
            st.plotly_chart(
                ability_density(th.reshape(-1, th.shape[-1]), list(table["comparison"])), key="abil_density"
            )
        st.plotly_chart(ability_forest(table, point_only=point_only), key="abil_forest")
        show_table(table, key="abil_table")
        if not point_only:  # the decision rule, and how often it fires with no difference (issue 30)
            st.caption(DECISION_NOTE)
        if point_only:
            st.caption(
                "MAP point: P(B better) and contraction are left empty (a point estimate "
                "has no probability or posterior variance)."
            )
        c = st.columns(3)
        c[0].download_button("abilities.csv", csv_text(table), "abilities.csv", mime="text/csv", key="abil_dl_csv")
        c[1].download_button(
            "posterior.nc (arviz netcdf)",
            netcdf_bytes(fit),
            "posterior.nc",
            mime="application/x-netcdf",
            key="abil_dl_nc",
        )
        c[2].download_button(
            "diagnostics.json",
            diagnostics_json(fit.diagnostics),
            "diagnostics.json",
            mime="application/json",
            key="abil_dl_diag",
        )
        if clicked:
            st.success(server_time_text(started))

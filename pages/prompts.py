import streamlit as st

st.title("prompts")
st.info("Work in progress.")

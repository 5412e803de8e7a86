import streamlit as st

st.title("revision")
st.info("Work in progress.")

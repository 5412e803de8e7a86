import streamlit as st

st.title("selection")
st.info("Work in progress.")

import streamlit as st

st.title("cost")
st.info("Work in progress.")

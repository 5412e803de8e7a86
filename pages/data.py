import streamlit as st

st.title("data")
st.info("Work in progress.")

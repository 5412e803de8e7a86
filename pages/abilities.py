import streamlit as st

st.title("abilities")
st.info("Work in progress.")

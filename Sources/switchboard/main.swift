print("switchboard")

/// The wire format shared by server and client.
public enum Wire {}

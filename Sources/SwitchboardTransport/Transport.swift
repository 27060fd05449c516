/// Sockets, event loops and WebSocket.
public enum Transport {}

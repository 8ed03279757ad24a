//! WebSocket events and the WebSocket side channel.

package dev.nvmf.verbs;

import java.util.List;

/**
 * The subset of {@code struct ibv_port_attr} an operator wants to see.
 *
 * @param portNum    1-based port number
 * @param state      IBV_PORT_* state (1 down, 2 init, 3 armed, 4 active)
 * @param maxMtu     enum ibv_mtu (1 = 256 ... 5 = 4096)
 * @param activeMtu  enum ibv_mtu
 * @param linkLayer  1 InfiniBand, 2 Ethernet (RoCE)
 * @param gids       non-zero GIDs of the port, formatted as IPv6 addresses
 */
public record PortAttributes(int portNum, int state, int maxMtu, int activeMtu, int linkLayer, List<String> gids) {
    public String stateName() {
        return switch (state) {
            case 1 -> "DOWN";
            case 2 -> "INIT";
            case 3 -> "ARMED";
            case 4 -> "ACTIVE";
            case 5 -> "ACTIVE_DEFER";
            default -> "NOP";
        };
    }

    public String linkLayerName() {
        return switch (linkLayer) {
            case 1 -> "InfiniBand";
            case 2 -> "Ethernet";
            default -> "unspecified";
        };
    }
}

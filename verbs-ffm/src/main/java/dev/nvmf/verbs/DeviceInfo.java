package dev.nvmf.verbs;

import java.util.List;

/**
 * What a device reports about itself (ibv_query_device / ibv_query_port), copied to the heap.
 *
 * @param name            device name, e.g. "rxe0"
 * @param nodeGuid        node GUID, as printed by ibv_devices
 * @param attributes      device limits and capabilities
 * @param ports           per-port attributes, index 0 = port 1
 */
public record DeviceInfo(String name, long nodeGuid, DeviceAttributes attributes, List<PortAttributes> ports) {}

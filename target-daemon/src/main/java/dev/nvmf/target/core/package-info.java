/**
 * The transport-independent NVMe-oF controller core (kernel model: drivers/nvme/target/). Transports talk to it
 * through four boundary types in this package: {@link dev.nvmf.target.core.QueueAcceptor} (implemented by
 * {@link dev.nvmf.target.core.NvmeTarget}), {@link dev.nvmf.target.core.CommandQueue} (implemented by
 * {@link dev.nvmf.target.core.NvmeQueue}), {@link dev.nvmf.target.core.QueueTransport} and
 * {@link dev.nvmf.target.core.NvmeRequest}.
 *
 * <h2>A command's path</h2>
 * {@link dev.nvmf.target.core.NvmeQueue#begin} runs the checks every command shares and hands the command to one
 * command set's {@link dev.nvmf.target.core.CommandParser} (Fabrics for opcode 7Fh, otherwise the set the queue's
 * Connect chose: admin, discovery or I/O). The parser decodes the opcode once, checks what it can before data moves,
 * sets the data direction and returns the {@link dev.nvmf.target.core.CommandHandler}, which the
 * {@link dev.nvmf.target.core.CommandContext} keeps (kernel core.c: {@code req->execute}, set by
 * {@code nvmet_req_init}'s parse functions). {@code execute} and the backend's completion call that handler; nothing
 * decodes the opcode again. Handlers are built once, with the target, and get what they need (options, the clock,
 * {@link dev.nvmf.target.core.fabrics.ConnectModel}, {@link dev.nvmf.target.core.discovery.DiscoveryLogSource},
 * {@link dev.nvmf.target.core.admin.AnaLogSource}),
 * never the target itself: no class of the core but the target knows {@code NvmeTarget} (CoreDependenciesTest).
 *
 * <h2>Map</h2>
 * <table>
 *   <caption>Where each concern lives</caption>
 *   <tr><th>Concern</th><th>Class</th><th>Spec</th><th>Kernel</th></tr>
 *   <tr><td>Target model, config API (ports, subsystems, referrals, reload), keep-alive timer sweep
 *       ({@code checkTimers}), discovery generation counter</td>
 *       <td>{@link dev.nvmf.target.core.NvmeTarget}</td><td>NVMe-oF 1.1 &sect;3, &sect;5</td><td>core.c, configfs.c</td></tr>
 *   <tr><td>Limits and defaults (MDTS, at most 8 MiB; admin depth; KAS; discovery KATO; AERL; ELPE)</td>
 *       <td>{@link dev.nvmf.target.core.TargetOptions}</td><td></td><td>nvmet.h</td></tr>
 *   <tr><td>Per-command gate: SQ head/SQHD, Connect-first, CC.EN check, the command set, CQE writing, error
 *       log and the CQE's More bit</td>
 *       <td>{@link dev.nvmf.target.core.NvmeQueue}, {@link dev.nvmf.target.core.CommandContext},
 *       {@code QueueServices}</td>
 *       <td>Base 2.0 &sect;4.2, &sect;4.6</td><td>core.c (nvmet_req_init/complete)</td></tr>
 *   <tr><td>Parse once, execute by the handler chosen then</td>
 *       <td>{@link dev.nvmf.target.core.CommandParser}, {@link dev.nvmf.target.core.CommandHandler},
 *       {@link dev.nvmf.target.core.OpcodeTable}</td>
 *       <td></td><td>core.c (req-&gt;execute)</td></tr>
 *   <tr><td>Subsystems, namespaces (and their resize: {@code revalidateNamespace}), host allow list, ports,
 *       referrals, controller ids, the daemon's per-namespace meters</td>
 *       <td>{@code subsystem.Subsystem}, {@code Namespace}, {@code Port}, {@code Referral},
 *       {@code CntlidAllocator}, {@code IoStatistics}, {@code NamespaceObserver}</td><td>Base 2.0 &sect;3.2</td>
 *       <td>core.c, configfs.c</td></tr>
 *   <tr><td>ANA: each port's state of each group (defaults group 1 optimized, others inaccessible), a
 *       namespace's group, the change count and the ANA change notice ({@code NvmeTarget.setAnaState},
 *       {@code moveNamespaceAnaGroup}), the path statuses on I/O, the ANA log page</td>
 *       <td>{@code subsystem.AnaPortStates}, {@code nvme.AnaState}, {@code io.IoCommands},
 *       {@code admin.AnaLogPage}, {@code AnaLogSource}</td><td>Base 2.0 &sect;8.1, &sect;5.16.1.13</td>
 *       <td>core.c (nvmet_check_ana_state, nvmet_send_ana_event), configfs.c (ana_groups), admin-cmd.c</td></tr>
 *   <tr><td>Controller (dynamic model), queues attached, features state, shutdown (flush every namespace),
 *       teardown; the reported temperature and its thresholds</td>
 *       <td>{@code controller.Controller}, {@code controller.Temperature}</td><td>NVMe-oF 1.1 &sect;3.3</td><td>core.c (nvmet_ctrl)</td></tr>
 *   <tr><td>Properties and the CC/CSTS state machine (enable, reset, shutdown/SHST, CFS)</td>
 *       <td>{@code controller.ControllerProperties}</td><td>Base 2.0 &sect;3.1.3, &sect;3.5-3.6</td>
 *       <td>core.c (nvmet_update_cc)</td></tr>
 *   <tr><td>Keep-alive timer (traffic based, TBKAS)</td><td>{@code controller.KeepAliveTimer}</td>
 *       <td>Base 2.0 &sect;3.9</td><td>core.c (nvmet_keep_alive_timer)</td></tr>
 *   <tr><td>Asynchronous events (held AERs, pending events)</td><td>{@code controller.AsyncEventQueue}</td>
 *       <td>Base 2.0 &sect;5.2</td><td>core.c (nvmet_add_async_event)</td></tr>
 *   <tr><td>Error log, changed namespace list</td>
 *       <td>{@code controller.ErrorLog}, {@code controller.ChangedNamespaceList}</td>
 *       <td>Base 2.0 &sect;5.16.1.2, &sect;5.16.1.5</td><td>core.c</td></tr>
 *   <tr><td>Fabrics: Property Get/Set, Disconnect</td><td>{@code fabrics.FabricsCommands}</td>
 *       <td>NVMe-oF 1.1 &sect;3.4-3.5</td><td>fabrics-cmd.c</td></tr>
 *   <tr><td>Fabrics Connect (all validations, IPO/IATTR)</td>
 *       <td>{@code fabrics.ConnectCommand}, {@code ConnectModel}</td>
 *       <td>NVMe-oF 1.1 &sect;3.3</td><td>fabrics-cmd.c</td></tr>
 *   <tr><td>Admin commands' parse step, Asynchronous Event Request, Keep Alive, Abort</td>
 *       <td>{@code admin.AdminCommands}</td>
 *       <td>Base 2.0 &sect;5.1, &sect;5.2, &sect;5.24</td><td>admin-cmd.c</td></tr>
 *   <tr><td>Identify (controller, namespace, lists, descriptors, CNS 05h-08h)</td>
 *       <td>{@code admin.IdentifyCommand}</td><td>Base 2.0 &sect;5.17</td><td>admin-cmd.c</td></tr>
 *   <tr><td>Get Log Page (supported pages, error, SMART, firmware slot, changed namespaces, effects, ANA)</td>
 *       <td>{@code admin.GetLogPageCommand}</td><td>Base 2.0 &sect;5.16</td><td>admin-cmd.c</td></tr>
 *   <tr><td>Set/Get Features</td><td>{@code admin.FeaturesCommands}</td><td>Base 2.0 &sect;5.15, &sect;5.21</td>
 *       <td>admin-cmd.c</td></tr>
 *   <tr><td>I/O: Read, Write, Flush, Write Zeroes, Dataset Management, Compare (one class each, with its
 *       parse checks, execution and backend completion); Compare's bounded scratch; errno mapping</td>
 *       <td>{@code io.IoCommands} (the parse step), {@code io.ReadCommand} ... {@code io.DatasetManagementCommand},
 *       {@code io.CompareBuffers}, {@code io.BackendStatus}</td><td>NVM Command Set 1.0 &sect;3</td>
 *       <td>io-cmd-bdev.c, io-cmd-file.c</td></tr>
 *   <tr><td>Discovery controllers' admin commands</td><td>{@code discovery.DiscoveryCommands}</td>
 *       <td>NVMe-oF 1.1 &sect;5</td><td>discovery.c</td></tr>
 *   <tr><td>Discovery log page (per-host filtering, the host's port or every port, current entry, referrals,
 *       a wildcard port's reached address)</td>
 *       <td>{@code discovery.DiscoveryLogPage}, {@code DiscoveryLogSource}, {@code TransportAddresses}</td><td>NVMe-oF 1.1 &sect;5.3</td>
 *       <td>discovery.c</td></tr>
 * </table>
 *
 * <h2>Threads</h2>
 * {@code begin}/{@code execute} run on the queue's poller; completions may come from backend threads and, for
 * held Asynchronous Event Requests, from the control plane. The config API takes one model lock (control path);
 * the I/O path takes no lock and allocates nothing once warm (ZeroAllocationTest).
 */
package dev.nvmf.target.core;

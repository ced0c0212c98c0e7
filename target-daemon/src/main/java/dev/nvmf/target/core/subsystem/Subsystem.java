package dev.nvmf.target.core.subsystem;

import dev.nvmf.target.backend.BlockBackend;
import dev.nvmf.target.core.controller.Controller;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;

/**
 * An NVM subsystem (kernel: {@code struct nvmet_subsys}): its NQN and identity, its namespaces, which hosts may
 * connect, which ports expose it, and the controllers connected to it (dynamic model: one per admin Connect).
 *
 * <p>Control path methods ({@link #addNamespace}, {@link #allowHost}, ...) take the target's model lock and may be
 * called from any thread at any time (config reload). The I/O path reads namespaces through {@link #namespace},
 * a lock-free read of an array that control path changes replace as a whole.
 */
public final class Subsystem {
    private final SubsystemConfig config;
    private final boolean discovery;
    private final Object lock;
    private final Runnable discoveryChanged;
    private final CntlidAllocator cntlids;

    /** Indexed by NSID; replaced, never mutated, so readers need no lock. */
    private volatile Namespace[] namespaces = new Namespace[NamespaceConfig.MAX_NSID + 1];
    private volatile boolean allowAnyHost;
    private volatile Set<String> allowedHosts = Set.of();
    /** Ports exposing this subsystem (guarded by lock). */
    private final Set<Integer> ports = new TreeSet<>();
    /** Live controllers (guarded by lock). */
    private final List<Controller> controllers = new ArrayList<>();
    private volatile boolean removed;

    /**
     * Created by the target ({@code NvmeTarget.addSubsystem}); {@code lock} is the target's model lock and
     * {@code discoveryChanged} bumps the discovery generation counter.
     */
    public Subsystem(SubsystemConfig config, boolean discovery, Object lock, Runnable discoveryChanged) {
        this.config = Objects.requireNonNull(config, "config");
        this.discovery = discovery;
        this.lock = lock;
        this.discoveryChanged = discoveryChanged;
        this.cntlids = new CntlidAllocator(config.minCntlid(), config.maxCntlid());
        this.allowAnyHost = config.allowAnyHost();
    }

    public String nqn() { return config.nqn(); }
    public SubsystemConfig config() { return config; }
    /** True for the discovery subsystem (well-known NQN; discovery controllers). */
    public boolean isDiscovery() { return discovery; }
    public boolean isRemoved() { return removed; }

    // ------------------------------------------------------------------------------------------- namespaces

    /** The active namespace {@code nsid}, or null (no lock; any thread). */
    public Namespace namespace(int nsid) {
        Namespace[] ns = namespaces;
        return nsid > 0 && nsid < ns.length ? ns[nsid] : null;
    }

    /** Active namespaces in NSID order (a snapshot). */
    public List<Namespace> namespaces() {
        Namespace[] ns = namespaces;
        List<Namespace> list = new ArrayList<>();
        for (Namespace n : ns) {
            if (n != null) {
                list.add(n);
            }
        }
        return list;
    }

    /**
     * Adds a namespace and tells every connected controller (Namespace Attribute Changed notice, changed namespace
     * list). The backend stays owned by the caller.
     *
     * @throws IllegalStateException if the NSID is in use or this is the discovery subsystem
     */
    public Namespace addNamespace(NamespaceConfig nsConfig, BlockBackend backend) {
        Namespace ns = new Namespace(nsConfig, backend);
        synchronized (lock) {
            if (discovery) {
                throw new IllegalStateException("the discovery subsystem has no namespaces");
            }
            if (namespaces[ns.nsid()] != null) {
                throw new IllegalStateException(nqn() + ": NSID " + ns.nsid() + " already in use");
            }
            Namespace[] copy = namespaces.clone();
            copy[ns.nsid()] = ns;
            namespaces = copy;
            notifyNamespaceChanged(ns.nsid());
        }
        return ns;
    }

    /**
     * Removes a namespace: new commands to it fail with Invalid Namespace at once; commands already in its backend
     * still complete. Returns it (the caller closes the backend once it is idle), or null if there was none.
     */
    public Namespace removeNamespace(int nsid) {
        synchronized (lock) {
            Namespace ns = namespace(nsid);
            if (ns == null) {
                return null;
            }
            Namespace[] copy = namespaces.clone();
            copy[nsid] = null;
            namespaces = copy;
            notifyNamespaceChanged(nsid);
            return ns;
        }
    }

    /**
     * Revalidates namespace {@code nsid}'s size against its medium (kernel configfs {@code revalidate_size} and
     * core.c {@code nvmet_ns_revalidate} / {@code nvmet_ns_changed}): when it changed, every controller records the
     * NSID in its changed namespace list and, where the host enabled namespace attribute notices, gets the
     * Namespace Attribute Changed event. The entry point of a resize: the daemon calls it on reload or on an
     * operator's command after growing the device or file, Identify Namespace on every host's rescan. Returns
     * whether the size changed (false for no such namespace); the namespace's observer hears of each change once,
     * whichever of them found it.
     */
    public boolean revalidateNamespace(int nsid) {
        synchronized (lock) {
            Namespace ns = namespace(nsid);
            if (ns == null) {
                return false;
            }
            long before = ns.sizeBlocks();
            if (!ns.revalidate()) {
                return false;
            }
            notifyNamespaceChanged(nsid);
            ns.observer().resized(ns, before);
            return true;
        }
    }

    private void notifyNamespaceChanged(int nsid) {
        for (Controller c : controllers) {
            c.namespaceChanged(nsid);
        }
    }

    // ------------------------------------------------------------------------------------------- host access

    public boolean allowAnyHost() { return allowAnyHost; }

    public void allowAnyHost(boolean allow) {
        synchronized (lock) {
            if (allowAnyHost != allow) {
                allowAnyHost = allow;
                discoveryChanged.run();
            }
        }
    }

    public void allowHost(String hostNqn) {
        Objects.requireNonNull(hostNqn, "hostNqn");
        synchronized (lock) {
            if (!allowedHosts.contains(hostNqn)) {
                Set<String> copy = new TreeSet<>(allowedHosts);
                copy.add(hostNqn);
                allowedHosts = Collections.unmodifiableSet(copy);
                discoveryChanged.run();
            }
        }
    }

    /** Takes a host off the allow list. Controllers it already has stay connected (as the kernel target). */
    public void disallowHost(String hostNqn) {
        synchronized (lock) {
            if (allowedHosts.contains(hostNqn)) {
                Set<String> copy = new TreeSet<>(allowedHosts);
                copy.remove(hostNqn);
                allowedHosts = Collections.unmodifiableSet(copy);
                discoveryChanged.run();
            }
        }
    }

    public Set<String> allowedHosts() { return allowedHosts; }

    /** May this host connect (the discovery subsystem admits everyone)? */
    public boolean isHostAllowed(String hostNqn) {
        return discovery || allowAnyHost || allowedHosts.contains(hostNqn);
    }

    // ------------------------------------------------------------------------------------------- ports

    /** Is the subsystem reachable through this port? (The discovery subsystem: on every port; checked by the target.) */
    public boolean isExposedOn(int portId) {
        synchronized (lock) {
            return discovery || ports.contains(portId);
        }
    }

    public Set<Integer> ports() {
        synchronized (lock) {
            return Set.copyOf(ports);
        }
    }

    /** For the target only (it bumps the generation counter). */
    public boolean addPort(int portId) {
        synchronized (lock) {
            return ports.add(portId);
        }
    }

    /** For the target only. */
    public boolean removePort(int portId) {
        synchronized (lock) {
            return ports.remove(portId);
        }
    }

    // ------------------------------------------------------------------------------------------- controllers

    /** Live controllers (a snapshot). */
    public List<Controller> controllers() {
        synchronized (lock) {
            return List.copyOf(controllers);
        }
    }

    /** The live controller with this id, or null. Caller holds the lock or accepts a racy answer. */
    public Controller controller(int cntlid) {
        synchronized (lock) {
            for (Controller c : controllers) {
                if (c.cntlid() == cntlid) {
                    return c;
                }
            }
            return null;
        }
    }

    /** For the target: a free controller id (-1 if the range is exhausted). Holds the lock. */
    public int allocateCntlid() {
        synchronized (lock) {
            return cntlids.allocate();
        }
    }

    /** For the target: registers a new controller. */
    public void attach(Controller controller) {
        synchronized (lock) {
            controllers.add(controller);
        }
    }

    /** For the target: forgets a controller and frees its id. */
    public void detach(Controller controller) {
        synchronized (lock) {
            if (controllers.remove(controller)) {
                cntlids.release(controller.cntlid());
            }
        }
    }

    /** For the target: marks the subsystem gone (Connects to it fail from now on). */
    public void markRemoved() {
        removed = true;
    }

    @Override
    public String toString() {
        return "subsystem " + nqn();
    }
}

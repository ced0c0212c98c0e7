package dev.nvmf.verbs.ffm;

import dev.nvmf.verbs.DeviceInfo;
import dev.nvmf.verbs.RecvWorkRequest;
import dev.nvmf.verbs.SendWorkRequest;
import dev.nvmf.verbs.VerbsException;
import org.junit.jupiter.api.Test;

import java.io.File;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What the provider does on a machine with rdma-core installed but no RDMA in the kernel (the build machine),
 * and the pieces of it that need no device: errno reporting, fd waiting, sockaddr encoding, GID text.
 */
class FfmProviderTest {
    /** Devices the kernel exposes to user space (empty or absent without RDMA). */
    private static List<String> kernelDevices() {
        File[] entries = new File("/sys/class/infiniband").listFiles();
        if (entries == null) return List.of();
        return java.util.Arrays.stream(entries).map(File::getName).sorted().toList();
    }

    @Test
    void listDevicesMatchesWhatTheKernelHasWithoutThrowing() {
        try (FfmProvider provider = new FfmProvider()) {
            assertEquals("ffm", provider.name());
            List<DeviceInfo> devices = provider.listDevices();
            List<String> names = devices.stream().map(DeviceInfo::name).sorted().toList();
            assertEquals(kernelDevices(), names, "ibv_get_device_list against /sys/class/infiniband");
        }
    }

    @Test
    void openingAMissingDeviceNamesTheCallAndErrno() {
        try (FfmProvider provider = new FfmProvider()) {
            VerbsException e = assertThrows(VerbsException.class, () -> provider.openDevice("no-such-hca9"));
            assertEquals("ibv_open_device", e.call());
            assertEquals(NativeLayout.ENODEV, e.errno());
            assertTrue(e.getMessage().contains("no-such-hca9"), e.getMessage());
            assertTrue(e.getMessage().contains("No such device"), e.getMessage());
        }
    }

    @Test
    void cmChannelFailureWithoutRdmaCmCarriesCallAndErrno() {
        if (Files.exists(Path.of("/dev/infiniband/rdma_cm"))) return; // a real RDMA stack: nothing to fail
        try (FfmProvider provider = new FfmProvider()) {
            VerbsException e = assertThrows(VerbsException.class, provider::createEventChannel);
            assertEquals("rdma_create_event_channel", e.call());
            assertNotEquals(0, e.errno());
            assertTrue(e.getMessage().startsWith("rdma_create_event_channel failed: errno " + e.errno() + " ("),
                    e.getMessage());
        }
    }

    @Test
    void aMissingLibraryIsNamedInTheFailure() {
        VerbsException e = assertThrows(VerbsException.class,
                () -> Rdma.load("libibverbs-does-not-exist.so.9", "libibverbs1"));
        assertTrue(e.getMessage().contains("libibverbs-does-not-exist.so.9"), e.getMessage());
        assertTrue(e.getMessage().contains("libibverbs1"), e.getMessage());
        assertEquals("dlopen libibverbs-does-not-exist.so.9", e.call());
    }

    @Test
    void errnoIsCapturedFromTheCallThatFailed() {
        // ibv_dereg_mr on a NULL-length bogus region would crash; close(-1) is a harmless control-path failure.
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment cap = Libc.allocateCapture(arena);
            int rc = (int) Libc.CLOSE.invokeExact(cap, -1);
            assertEquals(-1, rc);
            assertEquals(9, Libc.errno(cap), "EBADF");
            assertEquals("Bad file descriptor", Libc.strerror(9));
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }

    @Test
    void fdWaiterReportsTimeoutReadinessAndWakeup() throws Throwable {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment cap = Libc.allocateCapture(arena);
            int efd = (int) Libc.EVENTFD.invokeExact(cap, 0, NativeLayout.EFD_NONBLOCK);
            assertTrue(efd >= 0);
            try (FdWaiter waiter = new FdWaiter(efd, "test eventfd")) {
                assertEquals(FdWaiter.Result.TIMEOUT, waiter.await(0));
                assertEquals(FdWaiter.Result.TIMEOUT, waiter.await(20));
                MemorySegment one = arena.allocate(8);
                one.set(JAVA_LONG, 0, 1L);
                assertEquals(8L, (long) Libc.WRITE.invokeExact(cap, efd, one, 8L));
                assertEquals(FdWaiter.Result.READY, waiter.await(1000));
                assertEquals(8L, (long) Libc.READ.invokeExact(cap, efd, one, 8L));
                Thread t = Thread.ofPlatform().start(() -> {
                    try {
                        Thread.sleep(50);
                    } catch (InterruptedException ignored) {
                        Thread.currentThread().interrupt();
                    }
                    waiter.wakeup();
                });
                assertEquals(FdWaiter.Result.WOKEN, waiter.await(10_000));
                t.join();
                // the wakeup was consumed
                assertEquals(FdWaiter.Result.TIMEOUT, waiter.await(0));
            } finally {
                Libc.close(efd);
            }
        }
    }

    @Test
    void badWrIsTurnedIntoTheNumberOfRequestsPostedBeforeIt() {
        try (Arena arena = Arena.ofConfined()) {
            SendWorkRequest a = SendWorkRequest.allocate(arena);
            SendWorkRequest b = SendWorkRequest.allocate(arena);
            SendWorkRequest c = SendWorkRequest.allocate(arena);
            a.next(b);
            b.next(c);
            c.next(null);
            long next = SendWorkRequest.NEXT_OFFSET;
            assertEquals(0, FfmQueuePair.postedBefore(a.address(), a.address(), next), "bad_wr = the first");
            assertEquals(1, FfmQueuePair.postedBefore(a.address(), b.address(), next));
            assertEquals(2, FfmQueuePair.postedBefore(a.address(), c.address(), next));
            assertEquals(3, FfmQueuePair.postedBefore(a.address(), 0, next), "no bad_wr reported: all count as posted");
            SendWorkRequest stranger = SendWorkRequest.allocate(arena);
            assertEquals(3, FfmQueuePair.postedBefore(a.address(), stranger.address(), next));
            RecvWorkRequest r1 = RecvWorkRequest.allocate(arena);
            RecvWorkRequest r2 = RecvWorkRequest.allocate(arena);
            r1.next(r2);
            r2.next(null);
            assertEquals(1, FfmQueuePair.postedBefore(r1.address(), r2.address(), RecvWorkRequest.NEXT_OFFSET));
        }
    }

    @Test
    void sockaddrsAreWrittenInNetworkOrderAndReadBack() throws Exception {
        try (Arena arena = Arena.ofConfined()) {
            InetSocketAddress v4 = new InetSocketAddress(InetAddress.getByName("10.77.0.1"), 4420);
            MemorySegment s = Sockaddr.write(arena, v4);
            assertEquals((short) NativeLayout.AF_INET, s.get(JAVA_SHORT, 0));
            assertArrayEquals(new byte[] {0x11, 0x44}, s.asSlice(2, 2).toArray(JAVA_BYTE)); // 4420 = 0x1144
            assertArrayEquals(new byte[] {10, 77, 0, 1}, s.asSlice(4, 4).toArray(JAVA_BYTE));
            assertEquals(v4, Sockaddr.read(s));

            InetSocketAddress v6 = new InetSocketAddress(InetAddress.getByName("fd00::77:1"), 4791);
            MemorySegment s6 = Sockaddr.write(arena, v6);
            assertEquals((short) NativeLayout.AF_INET6, s6.get(JAVA_SHORT, 0));
            assertArrayEquals(new byte[] {0x12, (byte) 0xb7}, s6.asSlice(2, 2).toArray(JAVA_BYTE));
            assertEquals(0x77, s6.get(JAVA_BYTE, NativeLayout.SOCKADDR_IN6_ADDR + 13));
            assertEquals(v6, Sockaddr.read(s6));

            assertEquals(null, Sockaddr.read(arena.allocate(NativeLayout.SOCKADDR_STORAGE_SIZE)));
        }
    }

    @Test
    void gidsAreFormattedAsIpv6() {
        byte[] linkLocal = new byte[16];
        linkLocal[0] = (byte) 0xfe;
        linkLocal[1] = (byte) 0x80;
        linkLocal[8] = 0x02;
        linkLocal[15] = 0x01;
        assertEquals("fe80::200:0:0:1", DeviceQuery.formatIpv6(linkLocal));
        byte[] mapped = new byte[16];
        mapped[10] = (byte) 0xff;
        mapped[11] = (byte) 0xff;
        mapped[12] = 10;
        mapped[13] = 77;
        mapped[15] = 1;
        assertEquals("::ffff:a4d:1", DeviceQuery.formatIpv6(mapped));
        assertFalse(DeviceQuery.formatIpv6(new byte[16]).isEmpty());
    }
}

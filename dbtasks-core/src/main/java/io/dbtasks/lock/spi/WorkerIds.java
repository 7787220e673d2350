package io.dbtasks.lock.spi;

import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.util.UUID;

/** Names a process among the instances that share a store. Stateless; thread-safe. */
public final class WorkerIds {
    private WorkerIds() {}

    /**
     * A worker id unique to this process: {@code host:pid:random}, the host name cut to 150
     * characters, so that it fits the 200-character owner columns with a thread name.
     *
     * @return a new id; never {@code null}
     */
    public static String defaultWorkerId() {
        String host;
        try {
            host = InetAddress.getLocalHost().getHostName();
        } catch (Exception e) {
            host = "unknown-host";
        }
        if (host.length() > 150) { // a long FQDN; keep the most specific labels
            host = host.substring(0, 150);
        }
        String pid = ManagementFactory.getRuntimeMXBean().getName().split("@")[0];
        return host + ":" + pid + ":" + UUID.randomUUID().toString().substring(0, 8);
    }
}

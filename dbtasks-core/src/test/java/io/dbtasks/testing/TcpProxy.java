package io.dbtasks.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A TCP proxy on localhost in front of a database, for outage tests: {@link #cut()} closes every
 * connection and refuses new ones (the database is unreachable), {@link #restore()} accepts again
 * on the same port, and {@link #freeze()} keeps connections open but stops passing bytes (a hung
 * database or commit). Not for production; one pump thread per direction per connection.
 */
public final class TcpProxy implements AutoCloseable {
    private final String targetHost;
    private final int targetPort;
    private final InetAddress listenAddress;
    private final int port;
    private final Set<Socket> sockets = ConcurrentHashMap.newKeySet();
    private volatile ServerSocket server;
    private volatile boolean frozen;

    /**
     * @param targetHost where the database listens
     * @param targetPort its port
     * @throws IOException if no local port can be bound
     */
    public TcpProxy(String targetHost, int targetPort) throws IOException {
        this(targetHost, targetPort, InetAddress.getLoopbackAddress(), 0);
    }

    /**
     * A proxy on a chosen local address and port: another loopback address ({@code 127.0.0.3},
     * ...) can serve the same port number as the database, so that clients see the server's port.
     *
     * @param targetHost where the database listens
     * @param targetPort its port
     * @param listenAddress the local address to listen on
     * @param listenPort the port to listen on, 0 for a free one
     * @throws IOException if the address and port cannot be bound
     */
    public TcpProxy(String targetHost, int targetPort, InetAddress listenAddress, int listenPort) throws IOException {
        this.targetHost = targetHost;
        this.targetPort = targetPort;
        this.listenAddress = listenAddress;
        ServerSocket s = bind(listenAddress, listenPort);
        this.port = s.getLocalPort();
        accept(s);
    }

    /** @return {@code jdbcUrl} with its {@code //host:port/} replaced by this proxy's */
    public String rewrite(String jdbcUrl) {
        return jdbcUrl.replaceFirst("//[^/]+/", "//" + listenAddress.getHostAddress() + ":" + port + "/");
    }

    /** Closes every proxied connection and refuses new ones until {@link #restore()}. */
    public synchronized void cut() throws IOException {
        ServerSocket s = server;
        server = null;
        if (s != null) {
            s.close();
        }
        for (Socket socket : sockets) {
            socket.close();
        }
        sockets.clear();
    }

    /** Accepts connections again, on the same port. */
    public synchronized void restore() throws IOException {
        frozen = false;
        if (server == null) {
            accept(bind(listenAddress, port));
        }
    }

    /** Keeps connections open but passes no bytes until {@link #restore()}. */
    public void freeze() {
        frozen = true;
    }

    @Override
    public void close() throws IOException {
        cut();
    }

    private static ServerSocket bind(InetAddress address, int port) throws IOException {
        ServerSocket s = new ServerSocket();
        s.setReuseAddress(true);
        s.bind(new InetSocketAddress(address, port));
        return s;
    }

    private void accept(ServerSocket s) {
        server = s;
        Thread t = new Thread(
                () -> {
                    while (!s.isClosed()) {
                        try {
                            Socket client = s.accept();
                            Socket db;
                            try {
                                db = new Socket(targetHost, targetPort);
                            } catch (IOException refused) {
                                client.close();
                                continue;
                            }
                            sockets.add(client);
                            sockets.add(db);
                            pump(client, db);
                            pump(db, client);
                        } catch (IOException closed) {
                            // cut, or the database refused: the client sees its socket close
                        }
                    }
                },
                "tcp-proxy-accept");
        t.setDaemon(true);
        t.start();
    }

    private void pump(Socket from, Socket to) {
        Thread t = new Thread(
                () -> {
                    byte[] buffer = new byte[16384];
                    try (InputStream in = from.getInputStream();
                            OutputStream out = to.getOutputStream()) {
                        int n;
                        while ((n = in.read(buffer)) >= 0) {
                            while (frozen) {
                                Thread.sleep(10);
                            }
                            out.write(buffer, 0, n);
                            out.flush();
                        }
                    } catch (IOException | InterruptedException e) {
                        // closed by cut() or by either end
                    } finally {
                        closeQuietly(from);
                        closeQuietly(to);
                    }
                },
                "tcp-proxy-pump");
        t.setDaemon(true);
        t.start();
    }

    private void closeQuietly(Socket s) {
        sockets.remove(s);
        try {
            s.close();
        } catch (IOException ignored) {
            // already closed
        }
    }
}

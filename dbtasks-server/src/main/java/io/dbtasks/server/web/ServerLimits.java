package io.dbtasks.server.web;

import java.time.Instant;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.util.unit.DataSize;

/**
 * {@code dbtasks.server.*} limits on what clients send.
 */
@ConfigurationProperties("dbtasks.server")
public class ServerLimits {
    /** The earliest {@code runAt} accepted; every database stores it. */
    public static final Instant MIN_RUN_AT = Instant.parse("1970-01-01T00:00:00Z");
    /** The latest {@code runAt} accepted: MariaDB's DATETIME ends in 9999. */
    public static final Instant MAX_RUN_AT = Instant.parse("9999-12-31T23:59:59Z");

    private DataSize maxRequestSize = DataSize.ofMegabytes(1);
    private DataSize maxPayloadSize = DataSize.ofMegabytes(1);
    private int listPayloadLimit = 1024;

    /** @return the largest request body accepted; larger gets 413. Default 1 MB */
    public DataSize getMaxRequestSize() {
        return maxRequestSize;
    }

    /** @param maxRequestSize the largest request body accepted */
    public void setMaxRequestSize(DataSize maxRequestSize) {
        this.maxRequestSize = maxRequestSize;
    }

    /** @return the largest task payload accepted, as compact JSON in UTF-8; larger gets 413. Default 1 MB */
    public DataSize getMaxPayloadSize() {
        return maxPayloadSize;
    }

    /** @param maxPayloadSize the largest task payload accepted */
    public void setMaxPayloadSize(DataSize maxPayloadSize) {
        this.maxPayloadSize = maxPayloadSize;
    }

    /**
     * @return in lists without {@code include=payload}, payloads longer than this many characters of
     *     JSON are left out ({@code payloadOmitted: true}); default 1024
     */
    public int getListPayloadLimit() {
        return listPayloadLimit;
    }

    /** @param listPayloadLimit the longest payload, in JSON characters, that lists show unasked */
    public void setListPayloadLimit(int listPayloadLimit) {
        this.listPayloadLimit = listPayloadLimit;
    }
}

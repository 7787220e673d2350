package io.dbtasks.server.openapi;

import io.dbtasks.server.idempotency.IdempotencyKeyFilter;
import io.dbtasks.server.idempotency.IdempotencyProperties;
import io.dbtasks.server.web.ServerLimits;
import io.swagger.v3.oas.models.Components;
import io.swagger.v3.oas.models.OpenAPI;
import io.swagger.v3.oas.models.Operation;
import io.swagger.v3.oas.models.PathItem;
import io.swagger.v3.oas.models.headers.Header;
import io.swagger.v3.oas.models.info.Info;
import io.swagger.v3.oas.models.info.License;
import io.swagger.v3.oas.models.media.Content;
import io.swagger.v3.oas.models.media.IntegerSchema;
import io.swagger.v3.oas.models.media.MediaType;
import io.swagger.v3.oas.models.media.ObjectSchema;
import io.swagger.v3.oas.models.media.Schema;
import io.swagger.v3.oas.models.media.StringSchema;
import io.swagger.v3.oas.models.parameters.HeaderParameter;
import io.swagger.v3.oas.models.responses.ApiResponse;
import io.swagger.v3.oas.models.responses.ApiResponses;
import io.swagger.v3.oas.models.security.SecurityRequirement;
import io.swagger.v3.oas.models.security.SecurityScheme;
import java.util.Map;
import org.springdoc.core.customizers.OpenApiCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The OpenAPI document ({@code /v3/api-docs}, Swagger UI at {@code /swagger-ui.html}): the API's
 * authentication (HTTP basic, bearer), the {@code Idempotency-Key} header and its expiry policy on
 * every {@code POST} and {@code PATCH}, and the problem+json errors every operation may answer.
 */
@Configuration
public class OpenApiConfig {
    private static final String PROBLEM = "Problem";

    /**
     * @param idempotency the key expiry, published in the document
     * @param limits the size limits, published in the document
     * @return the document's info, security schemes and the problem schema
     */
    @Bean
    public OpenAPI dbtasksOpenApi(IdempotencyProperties idempotency, ServerLimits limits) {
        Schema<?> problem = new ObjectSchema()
                .description("An error, as RFC 9457 problem details (application/problem+json)")
                .addProperty("type", new StringSchema().example("about:blank"))
                .addProperty("title", new StringSchema().example("Bad request"))
                .addProperty("status", new IntegerSchema().example(400))
                .addProperty("detail", new StringSchema().description("What was wrong and what to do"))
                .addProperty("instance", new StringSchema().description("The request path, cut short"));
        return new OpenAPI()
                .info(new Info()
                        .title("dbtasks API")
                        .version("1")
                        .license(new License().name("Apache-2.0"))
                        .description("Background tasks out of the application's database: enqueue, inspect, retry,"
                                + " cancel, reschedule and run tasks.\n\n"
                                + "**Authentication**: HTTP basic or `Authorization: Bearer <token>`. Roles: viewer"
                                + " reads, operator also acts on tasks, admin also manages definitions, schedules and"
                                + " deletes.\n\n"
                                + "**Idempotency-Key** (IETF httpapi draft): every POST and PATCH accepts the header."
                                + " The first request with a key is processed and its response stored; a repeat with"
                                + " the same key and the same request (method, path, query, body) replays it with"
                                + " `Idempotent-Replayed: true`; the same key with another request gets 422; a repeat"
                                + " while the first is in progress gets 409 with `Retry-After`. Keys are scoped to the"
                                + " authenticated user and **expire "
                                + idempotency.getTtl().toHours()
                                + " hours after first use** (dbtasks.server.idempotency.ttl); a 5xx response is not"
                                + " stored. Keys are 1 to " + IdempotencyKeyFilter.MAX_KEY_LENGTH
                                + " printable ASCII characters.\n\n"
                                + "**Limits**: request bodies and task payloads up to "
                                + limits.getMaxRequestSize().toBytes() + " bytes (413 beyond); `runAt` between 1970"
                                + " and 9999; integers are plain JSON integers (no strings, no fractions).\n\n"
                                + "Every error is application/problem+json."))
                .components(new Components()
                        .addSchemas(PROBLEM, problem)
                        .addSecuritySchemes(
                                "basic",
                                new SecurityScheme()
                                        .type(SecurityScheme.Type.HTTP)
                                        .scheme("basic"))
                        .addSecuritySchemes(
                                "bearer",
                                new SecurityScheme()
                                        .type(SecurityScheme.Type.HTTP)
                                        .scheme("bearer")))
                .addSecurityItem(new SecurityRequirement().addList("basic"))
                .addSecurityItem(new SecurityRequirement().addList("bearer"));
    }

    /**
     * @return a customizer adding the errors and the Idempotency-Key header to every operation
     */
    @Bean
    public OpenApiCustomizer problemsAndIdempotencyKeys() {
        return api -> {
            if (api.getPaths() == null) {
                return;
            }
            api.getPaths().forEach((path, item) -> {
                for (Map.Entry<PathItem.HttpMethod, Operation> e :
                        item.readOperationsMap().entrySet()) {
                    boolean write = e.getKey() == PathItem.HttpMethod.POST || e.getKey() == PathItem.HttpMethod.PATCH;
                    customize(e.getValue(), write);
                }
            });
        };
    }

    private static void customize(Operation op, boolean write) {
        ApiResponses responses = op.getResponses() == null ? new ApiResponses() : op.getResponses();
        responses.remove("500");
        problem(
                responses,
                "400",
                "Invalid request: malformed JSON, a wrong type, an unknown field, NUL or a lone"
                        + " surrogate in text, an invalid %-encoding, a loose integer, a runAt out of range");
        problem(responses, "401", "No valid credentials");
        problem(responses, "403", "The caller's role does not allow this");
        problem(responses, "404", "No such task or resource");
        problem(responses, "405", "Method not allowed");
        problem(responses, "406", "The Accept header allows no JSON");
        problem(responses, "503", "The task store failed; retry later");
        if (write) {
            problem(
                    responses,
                    "409",
                    "The task's state does not allow this, or a request with the same"
                            + " Idempotency-Key is in progress");
            problem(responses, "413", "The body or the payload is over the size limit");
            problem(responses, "415", "The body is not application/json");
            problem(
                    responses,
                    "422",
                    "The Idempotency-Key (or the body's idempotencyKey) was used with a" + " different request");
            op.addParametersItem(new HeaderParameter()
                    .name(IdempotencyKeyFilter.HEADER)
                    .required(false)
                    .description("Makes the request safe to repeat: same key and request replay the first response;"
                            + " see the API description for the expiry policy")
                    .schema(new StringSchema().maxLength(IdempotencyKeyFilter.MAX_KEY_LENGTH)));
            responses.values().forEach(r -> {
                if (r.getHeaders() == null || !r.getHeaders().containsKey(IdempotencyKeyFilter.REPLAYED)) {
                    r.addHeaderObject(
                            IdempotencyKeyFilter.REPLAYED,
                            new Header()
                                    .description("true when this is the stored response of an earlier request with"
                                            + " the same Idempotency-Key")
                                    .schema(new StringSchema()));
                }
            });
        }
        op.setResponses(responses);
    }

    private static void problem(ApiResponses responses, String code, String description) {
        if (responses.containsKey(code)) {
            return;
        }
        responses.addApiResponse(
                code,
                new ApiResponse()
                        .description(description)
                        .content(new Content()
                                .addMediaType(
                                        "application/problem+json",
                                        new MediaType()
                                                .schema(new Schema<>().$ref("#/components/schemas/" + PROBLEM)))));
    }
}

package io.dbtasks.server.api;

import io.dbtasks.DataRejectedException;
import io.dbtasks.DbTasksException;
import io.dbtasks.IllegalTransitionException;
import io.dbtasks.InvalidPayloadException;
import io.dbtasks.TaskNotFoundException;
import io.dbtasks.UnknownKindException;
import io.dbtasks.server.web.Problems;
import io.dbtasks.server.web.RequestValidationFilter;
import io.dbtasks.server.web.ServerLimits;
import java.beans.PropertyEditorSupport;
import java.time.DateTimeException;
import java.util.Arrays;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.TypeMismatchException;
import org.springframework.context.i18n.LocaleContextHolder;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.MediaType;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.http.converter.HttpMessageNotReadableException;
import org.springframework.security.access.AccessDeniedException;
import org.springframework.security.core.AuthenticationException;
import org.springframework.security.web.firewall.RequestRejectedException;
import org.springframework.web.ErrorResponse;
import org.springframework.web.bind.MethodArgumentNotValidException;
import org.springframework.web.bind.WebDataBinder;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.InitBinder;
import org.springframework.web.bind.annotation.RestControllerAdvice;
import org.springframework.web.context.request.ServletWebRequest;
import org.springframework.web.context.request.WebRequest;
import org.springframework.web.method.annotation.MethodArgumentTypeMismatchException;
import org.springframework.web.servlet.HandlerMapping;
import org.springframework.web.servlet.mvc.method.annotation.ResponseEntityExceptionHandler;
import tools.jackson.core.JacksonException;
import tools.jackson.core.exc.InputCoercionException;
import tools.jackson.core.exc.StreamReadException;
import tools.jackson.databind.exc.MismatchedInputException;
import tools.jackson.databind.exc.UnrecognizedPropertyException;

/**
 * Answers every error of the API as {@code application/problem+json} (RFC 9457) with a {@code detail}
 * that says what was wrong: 400 for a bad body, payload, kind or parameter; 404 for a missing task;
 * 409 for an operation the task's state does not allow. Spring MVC's own errors (405, 415, missing
 * parameters...) keep their statuses through {@link ResponseEntityExceptionHandler}. Only a failure
 * of the server itself is a 5xx.
 */
@RestControllerAdvice
public class ApiExceptionHandler extends ResponseEntityExceptionHandler {
    private static final Logger log = LoggerFactory.getLogger(ApiExceptionHandler.class);

    /**
     * Integers in paths and query strings are plain ASCII decimals: {@code 0x10}, {@code #10},
     * {@code +1}, {@code 1.5} and other scripts' digits are refused (400), where Spring's own
     * conversion would read several of them.
     *
     * @param binder the request's binder
     */
    @InitBinder
    void strictIntegers(WebDataBinder binder) {
        binder.registerCustomEditor(long.class, new StrictIntegerEditor(Long.MIN_VALUE, Long.MAX_VALUE, false));
        binder.registerCustomEditor(Long.class, new StrictIntegerEditor(Long.MIN_VALUE, Long.MAX_VALUE, true));
        binder.registerCustomEditor(int.class, new StrictIntegerEditor(Integer.MIN_VALUE, Integer.MAX_VALUE, false));
        binder.registerCustomEditor(Integer.class, new StrictIntegerEditor(Integer.MIN_VALUE, Integer.MAX_VALUE, true));
    }

    private static final class StrictIntegerEditor extends PropertyEditorSupport {
        private static final java.util.regex.Pattern DIGITS = java.util.regex.Pattern.compile("-?[0-9]{1,19}");
        private final long min;
        private final long max;
        private final boolean boxed;

        StrictIntegerEditor(long min, long max, boolean boxed) {
            this.min = min;
            this.max = max;
            this.boxed = boxed;
        }

        @Override
        public void setAsText(String text) {
            if (text == null || text.isEmpty()) {
                if (boxed) {
                    setValue(null);
                    return;
                }
                throw new IllegalArgumentException("empty");
            }
            if (!DIGITS.matcher(text).matches()) {
                throw new IllegalArgumentException("not a plain decimal integer");
            }
            long v = Long.parseLong(text);
            if (v < min || v > max) {
                throw new IllegalArgumentException("out of range");
            }
            setValue(max == Long.MAX_VALUE ? (Object) v : (Object) (int) v);
        }
    }

    @ExceptionHandler({BadRequestException.class, UnknownKindException.class, InvalidPayloadException.class})
    ResponseEntity<Object> badRequest(RuntimeException e, WebRequest request) {
        return problem(e, HttpStatus.BAD_REQUEST, "Bad request", e.getMessage(), request);
    }

    /** The core's own validation of what it is given: a field's value, named in the message. */
    @ExceptionHandler(IllegalArgumentException.class)
    ResponseEntity<Object> invalidArgument(IllegalArgumentException e, WebRequest request) {
        return problem(e, HttpStatus.BAD_REQUEST, "Bad request", e.getMessage(), request);
    }

    /**
     * The database refused a value of the request (too long, out of range, a constraint): the
     * client's to fix, not a failure of the store. One line in the log, without the value (which
     * could hold line breaks) or a stack trace.
     */
    @ExceptionHandler(DataRejectedException.class)
    ResponseEntity<Object> dataRejected(DataRejectedException e, WebRequest request) {
        log.info("The database refused a value of a request (SQLState {}); answered 400", e.sqlState());
        return problem(
                e,
                HttpStatus.BAD_REQUEST,
                "Bad request",
                "The database refused a value of the request: one is too long, out of range, or holds characters"
                        + " it cannot store; check the values sent",
                request);
    }

    @ExceptionHandler(TaskNotFoundException.class)
    ResponseEntity<Object> notFound(TaskNotFoundException e, WebRequest request) {
        return problem(e, HttpStatus.NOT_FOUND, "Task not found", e.getMessage(), request);
    }

    @ExceptionHandler(io.dbtasks.workflow.WorkflowNotFoundException.class)
    ResponseEntity<Object> workflowNotFound(io.dbtasks.workflow.WorkflowNotFoundException e, WebRequest request) {
        return problem(e, HttpStatus.NOT_FOUND, "Workflow not found", e.getMessage(), request);
    }

    @ExceptionHandler(IllegalTransitionException.class)
    ResponseEntity<Object> conflict(IllegalTransitionException e, WebRequest request) {
        ProblemDetail body = ProblemDetail.forStatusAndDetail(HttpStatus.CONFLICT, e.getMessage());
        body.setTitle("Operation not allowed in the task's state");
        if (e.current() != null) {
            body.setProperty("taskStatus", e.current().name());
        }
        return handleExceptionInternal(e, body, new HttpHeaders(), HttpStatus.CONFLICT, request);
    }

    @ExceptionHandler(PayloadTooLargeException.class)
    ResponseEntity<Object> payloadTooLarge(PayloadTooLargeException e, WebRequest request) {
        return problem(e, HttpStatus.CONTENT_TOO_LARGE, "Content too large", e.getMessage(), request);
    }

    @ExceptionHandler(IdempotencyKeyReusedException.class)
    ResponseEntity<Object> keyReused(IdempotencyKeyReusedException e, WebRequest request) {
        return problem(e, HttpStatus.UNPROCESSABLE_CONTENT, "Idempotency key reused", e.getMessage(), request);
    }

    /** Spring Security's firewall refusing a header or parameter the handler read late. */
    @ExceptionHandler(RequestRejectedException.class)
    ResponseEntity<Object> rejected(RequestRejectedException e, WebRequest request) {
        return problem(
                e,
                HttpStatus.BAD_REQUEST,
                "Bad request",
                "A header or parameter holds characters that are not allowed (control or non-ASCII characters in"
                        + " headers, for example)",
                request);
    }

    /** Method security's refusals go back to Spring Security, which answers 401 or 403. */
    @ExceptionHandler({AccessDeniedException.class, AuthenticationException.class})
    void security(RuntimeException e) {
        throw e;
    }

    @ExceptionHandler(DbTasksException.class)
    ResponseEntity<Object> engineFailure(DbTasksException e, WebRequest request) {
        log.error("dbtasks failed while serving a request", e);
        return problem(
                e,
                HttpStatus.SERVICE_UNAVAILABLE,
                "Task store unavailable",
                "The task store failed; retry later, and see the server log if it persists",
                request);
    }

    @ExceptionHandler(Exception.class)
    ResponseEntity<Object> unexpected(Exception e, WebRequest request) {
        log.error("Unexpected error while serving a request", e);
        return problem(
                e,
                HttpStatus.INTERNAL_SERVER_ERROR,
                "Internal error",
                "The server failed unexpectedly; see its log",
                request);
    }

    /**
     * A form or query object that failed Bean Validation: 400 with every field's message (sorted, so
     * the answer is stable), so the client sees all it has to fix at once.
     */
    @Override
    protected ResponseEntity<Object> handleMethodArgumentNotValid(
            MethodArgumentNotValidException e, HttpHeaders headers, HttpStatusCode status, WebRequest request) {
        String detail = e.getBindingResult().getAllErrors().stream()
                .map(error -> error.getDefaultMessage() == null ? error.toString() : error.getDefaultMessage())
                .sorted()
                .distinct()
                .collect(java.util.stream.Collectors.joining("; "));
        return problem(e, HttpStatus.BAD_REQUEST, "Bad request", detail, request);
    }

    /** Malformed JSON, a value of the wrong type, an unknown field, or no body at all. */
    @Override
    protected ResponseEntity<Object> handleHttpMessageNotReadable(
            HttpMessageNotReadableException e, HttpHeaders headers, HttpStatusCode status, WebRequest request) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof RequestValidationFilter.RequestTooLargeException tooLarge) {
                return problem(e, HttpStatus.CONTENT_TOO_LARGE, "Content too large", tooLarge.getMessage(), request);
            }
        }
        return problem(e, HttpStatus.BAD_REQUEST, "Unreadable request body", unreadableDetail(e), request);
    }

    /**
     * Every answer of this handler, Spring MVC's own included (404, 405, 406, 415...), is
     * problem+json whatever the client accepts, with a detail cut short and free of class names.
     */
    @Override
    protected ResponseEntity<Object> handleExceptionInternal(
            Exception e, Object body, HttpHeaders headers, HttpStatusCode status, WebRequest request) {
        if (request instanceof ServletWebRequest servlet) {
            // Negotiation must not drop the problem for the handler's own media types (a 406 had no body).
            servlet.getRequest().removeAttribute(HandlerMapping.PRODUCIBLE_MEDIA_TYPES_ATTRIBUTE);
        }
        if (body == null && e instanceof ErrorResponse errorResponse) {
            body = errorResponse.updateAndGetBody(getMessageSource(), LocaleContextHolder.getLocale());
        }
        ProblemDetail problem = body instanceof ProblemDetail p ? p : null;
        if (problem == null && body == null) {
            problem = ProblemDetail.forStatus(status);
        }
        if (problem != null) {
            problem.setDetail(Problems.clean(problem.getDetail()));
            if (request instanceof ServletWebRequest servlet) {
                problem.setInstance(Problems.instance(servlet.getRequest().getRequestURI()));
            }
            HttpHeaders out = new HttpHeaders();
            out.addAll(headers);
            out.setContentType(MediaType.APPLICATION_PROBLEM_JSON);
            return super.handleExceptionInternal(e, problem, out, status, request);
        }
        return super.handleExceptionInternal(e, body, headers, status, request);
    }

    /** A path or query parameter that does not convert, such as {@code page=abc}. */
    @Override
    protected ResponseEntity<Object> handleTypeMismatch(
            TypeMismatchException e, HttpHeaders headers, HttpStatusCode status, WebRequest request) {
        String name = e instanceof MethodArgumentTypeMismatchException m ? m.getName() : e.getPropertyName();
        Class<?> type = e.getRequiredType();
        String expected = type == null
                ? "a different value"
                : type.isEnum()
                        ? "one of " + Arrays.toString(type.getEnumConstants())
                        : (type == int.class || type == long.class || type == Integer.class || type == Long.class)
                                ? "an integer"
                                : "a " + type.getSimpleName();
        Object value = e.getValue() instanceof Object[] values
                ? String.join(", ", Arrays.stream(values).map(String::valueOf).toList())
                : e.getValue();
        String detail = "'" + name + "' must be " + expected + (e.getValue() instanceof Object[] ? " (once)" : "")
                + ", got '" + Problems.quote(value) + "'";
        return problem(e, HttpStatus.BAD_REQUEST, "Invalid parameter", detail, request);
    }

    private static String unreadableDetail(HttpMessageNotReadableException e) {
        JacksonException j = jacksonCause(e);
        if (j instanceof UnrecognizedPropertyException u) {
            return "Unknown field '" + u.getPropertyName() + "'" + JsonErrors.at(null, u)
                    + " in the request body; known fields are " + u.getKnownPropertyIds();
        }
        if (j instanceof StreamReadException && !(j instanceof InputCoercionException)) {
            return "The request body is not valid JSON: " + j.getOriginalMessage();
        }
        if (j instanceof MismatchedInputException m && m.getTargetType() == java.time.Instant.class) {
            return "'" + JsonErrors.at(null, j).replace(" at '", "").replace("'", "")
                    + "' must be an ISO-8601 instant such as 2030-01-01T00:00:00Z, between " + ServerLimits.MIN_RUN_AT
                    + " and " + ServerLimits.MAX_RUN_AT;
        }
        if (j != null) {
            return "The request body does not match the expected shape" + JsonErrors.at(null, j) + ": "
                    + j.getOriginalMessage();
        }
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof DateTimeException) {
                return "A time in the request body is out of range; send an ISO-8601 instant between "
                        + ServerLimits.MIN_RUN_AT + " and " + ServerLimits.MAX_RUN_AT;
            }
        }
        if (e.getMessage() != null && e.getMessage().startsWith("Required request body is missing")) {
            return "A JSON request body is required";
        }
        return "The request body could not be read: " + e.getMostSpecificCause().getMessage();
    }

    private static JacksonException jacksonCause(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof JacksonException j) {
                return j;
            }
        }
        return null;
    }

    private ResponseEntity<Object> problem(
            Exception e, HttpStatus status, String title, String detail, WebRequest request) {
        ProblemDetail body = ProblemDetail.forStatusAndDetail(status, detail);
        body.setTitle(title);
        return handleExceptionInternal(e, body, new HttpHeaders(), status, request);
    }
}

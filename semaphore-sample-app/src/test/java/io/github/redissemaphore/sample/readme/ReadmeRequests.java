package io.github.redissemaphore.sample.readme;

import io.github.redissemaphore.sample.readme.Page.Mention;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The HTTP requests a page of the documentation shows: {@code curl} commands (with their method, body and what their
 * output is piped into), {@code METHOD /path} anywhere, code spans that are a path, the mappings of
 * its Java examples, and URLs of localhost.
 */
final class ReadmeRequests {

    /**
     * A request as a page writes it; {@code pipedInto} is the command after {@code |}, if any.
     * Without a written method (a bare path, a URL) it is sent as GET, but only the path must exist.
     * {@code where} is the page and line, {@code docs/operating.md line 12}.
     */
    record Request(String method, boolean methodWritten, String path, String body, String contentType,
                   List<String> pipedInto, String where) {

        /** @return the name of its check: the page and line, and the request */
        String describe() {
            return where + ": " + (methodWritten ? method + " " : "") + path
                    + (body == null ? "" : " " + body)
                    + (pipedInto.isEmpty() ? "" : " | " + String.join(" ", pipedInto));
        }
    }

    private static final Pattern CURL = Pattern.compile("(?<![\\w-])curl\\s.*");
    private static final Pattern METHOD_AND_PATH =
            Pattern.compile("\\b(GET|POST|PUT|PATCH|DELETE)\\s+(/[^\\s`'\"),]*)");
    private static final Pattern MAPPING = Pattern.compile(
            "@(Get|Post|Put|Patch|Delete)Mapping\\(\\s*(?:(?:value|path)\\s*=\\s*)?\"(/[^\"]*)\"");
    private static final Pattern LOCAL_URL =
            Pattern.compile("https?://(?:localhost|127\\.0\\.0\\.1)(?::\\d+)?(/[^\\s`'\")]*)");
    private static final Pattern PATH_SPAN = Pattern.compile("/[\\w{}<>.?=&%-]+(/[\\w{}<>.?=&%-]*)*");

    /** First segments of file-system paths, which a span may name too. */
    private static final List<String> FILE_SYSTEM_ROOTS =
            List.of("etc", "tmp", "usr", "var", "home", "opt", "dev", "proc", "bin");

    private ReadmeRequests() {
    }

    /** @return the requests of every page, in page order */
    static List<Request> of(Docs docs) {
        return docs.pages().stream().flatMap(page -> of(page).stream()).toList();
    }

    static List<Request> of(Page page) {
        Set<Request> requests = new LinkedHashSet<>();
        for (Mention fragment : page.codeFragments()) {
            Matcher curl = CURL.matcher(fragment.text());
            if (curl.find()) {
                requests.add(curl(fragment.where(), curl.group()));
            } else {
                for (Mention url : find(LOCAL_URL, fragment)) {
                    requests.add(request(null, url.text(), url.where()));
                }
            }
        }
        for (Mention span : page.spans()) {
            if (PATH_SPAN.matcher(span.text()).matches() && !FILE_SYSTEM_ROOTS.contains(span.text().split("/")[1])) {
                requests.add(request(null, span.text(), span.where()));
            }
        }
        Pattern[] withMethod = {METHOD_AND_PATH, MAPPING};
        for (Pattern pattern : withMethod) {
            Matcher matcher = pattern.matcher(page.text());
            while (matcher.find()) {
                requests.add(request(matcher.group(1).toUpperCase(), matcher.group(2),
                        page.name() + " line " + page.lineAt(matcher.start())));
            }
        }
        return List.copyOf(requests);
    }

    private static List<Mention> find(Pattern pattern, Mention fragment) {
        List<Mention> found = new ArrayList<>();
        Matcher matcher = pattern.matcher(fragment.text());
        while (matcher.find()) {
            found.add(new Mention(matcher.group(1), fragment.line(), fragment.page()));
        }
        return found;
    }

    private static Request request(String method, String path, String where) {
        String withoutPunctuation = path.replaceFirst("[.,:;]+$", "");
        return new Request(method != null ? method : "GET", method != null, withoutPunctuation, null, null, List.of(),
                where);
    }

    /** {@code curl [-s] [-X METHOD] [-H header] [-d body | --json body] URL [| command]}. */
    private static Request curl(String where, String command) {
        ShellWords.Pipeline pipeline = ShellWords.split(command);
        List<String> words = pipeline.command();
        String method = null;
        String body = null;
        String contentType = null;
        String url = null;
        for (int i = 1; i < words.size(); i++) {
            String word = words.get(i);
            switch (word) {
                case "-X", "--request" -> method = words.get(++i);
                case "-d", "--data", "--data-raw", "--data-binary" -> body = words.get(++i);
                case "--json" -> {
                    body = words.get(++i);
                    contentType = "application/json";
                }
                case "-H", "--header" -> {
                    String header = words.get(++i);
                    if (header.toLowerCase().startsWith("content-type:")) {
                        contentType = header.substring(header.indexOf(':') + 1).strip();
                    }
                }
                default -> url = word.startsWith("-") ? url : word;
            }
        }
        if (body != null && contentType == null) {
            contentType = body.strip().startsWith("{") ? "application/json" : "application/x-www-form-urlencoded";
        }
        String path = url == null ? "" : url.replaceFirst("^(https?://)?[^/]*", "");
        return new Request(method != null ? method : body != null ? "POST" : "GET", true, path.isEmpty() ? "/" : path,
                body, contentType, pipeline.pipedInto(), where);
    }
}

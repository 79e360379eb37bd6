"""Named layouts of servers, proxies and load balancers beyond Apache's and nginx's defaults.

Each is written as an Apache ``LogFormat`` string (``%{name}x`` is an opaque field that is read
and skipped), so it is walked by the same vectorised parser; ``FLAGS`` marks the fields that
may be preceded by padding spaces (``pad``) and the clients written ``address:port``
(``port``). The set covers every preset GoAccess ships (COMBINED, VCOMBINED, COMMON, VCOMMON,
W3C, CLOUDFRONT, CLOUDSTORAGE, AWSELB, AWSALB, AWSS3, SQUID, CADDY — a JSON layout,
``wagon.logs.jsonlog`` —, TRAEFIKCLF) plus HAProxy's HTTP log, Kubernetes ingress-nginx's and
the usual nginx and Apache layouts with durations. A W3C file's own ``#Fields:`` line is read
by ``wagon.logs.parse`` through ``w3c_spec``.
"""
from __future__ import annotations

__all__ = ["PRESETS", "FLAGS", "AUTO_ORDER", "W3C_IIS", "W3C_CLOUDFRONT", "w3c_spec"]

_NGINX = ('$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent '
          '"$http_referer" "$http_user_agent"')
_COMBINED = '%h %l %u %t "%r" %>s %b "%{Referer}i" "%{User-Agent}i"'
#: ISO 8601 times of AWS load balancers: the response's time, to the microsecond, in UTC
_AWS_TIME = "%{end:%Y-%m-%dT%H:%M:%S}t.%{end:usec_frac}tZ"

#: IIS's default ``#Fields:`` (GoAccess's W3C preset reads the same list)
W3C_IIS = ("date time s-ip cs-method cs-uri-stem cs-uri-query s-port cs-username c-ip "
           "cs(User-Agent) cs(Referer) sc-status sc-substatus sc-win32-status time-taken")
#: CloudFront's standard log fields up to time-taken (later versions add fields after it)
W3C_CLOUDFRONT = ("date time x-edge-location sc-bytes c-ip cs-method cs(Host) cs-uri-stem "
                  "sc-status cs(Referer) cs(User-Agent) cs-uri-query cs(Cookie) "
                  "x-edge-result-type x-edge-request-id x-host-header cs-protocol cs-bytes "
                  "time-taken")

#: W3C field names → Apache directives (other fields are read and skipped)
_W3C = {"date": "%{%Y-%m-%d}t", "time": "%{%H:%M:%S}t", "c-ip": "%a", "cs-method": "%m",
        "cs-uri-stem": "%U", "cs-uri-query": "%q", "sc-status": "%>s", "sc-bytes": "%b",
        "cs-bytes": "%I", "cs(user-agent)": "%{User-Agent}i", "cs(referer)": "%{Referer}i",
        "cs(referrer)": "%{Referer}i", "cs-host": "%v", "cs(host)": "%v",
        "x-forwarded-for": "%{X-Forwarded-For}i", "sc-content-type": "%{Content-Type}o"}


def w3c_spec(fields: str, sep: str = " ", rest: bool = False) -> str:
    """The Apache LogFormat of a W3C extended log with the ``#Fields:`` list ``fields``:
    ``time-taken`` in ms (IIS), in seconds in CloudFront's logs (``x-edge-*`` fields);
    ``rest``: more fields may follow the listed ones (read and skipped)."""
    names = fields.split()
    cloudfront = any(n.startswith("x-edge-") for n in names)
    taken = "%T" if cloudfront else "%{ms}T"
    out = [_W3C.get(n.lower(), taken if n.lower() == "time-taken" else
                    "%{" + n.replace("%", "") + "}x") for n in names]
    return sep.join(out + ["%{rest}x"] if rest else out)


PRESETS: dict[str, str] = {
    # W3C extended: IIS's default fields, CloudFront's (tab-separated); a file's own #Fields:
    # line takes precedence (wagon.logs.parse)
    "w3c": w3c_spec(W3C_IIS),
    "cloudfront": w3c_spec(W3C_CLOUDFRONT, "\t", rest=True),
    # AWS Application Load Balancer; the target's processing time is the duration (-1: none)
    "awsalb": (f"%{{type}}x {_AWS_TIME} %{{elb}}x %h %{{target}}x "
               '%{request_processing_time}x %T %{response_processing_time}x %>s '
               '%{target_status_code}x %I %b "%r" "%{User-Agent}i" %{rest}x'),
    # AWS Classic Load Balancer (HTTP listeners)
    "awselb": (f"{_AWS_TIME} %{{elb}}x %h %{{backend}}x "
               '%{request_processing_time}x %T %{response_processing_time}x %>s '
               '%{backend_status_code}x %I %b "%r" "%{User-Agent}i" %{rest}x'),
    # the same before AWS added the agent and TLS fields (2015): ends with the request
    "awselb-2014": (f"{_AWS_TIME} %{{elb}}x %h %{{backend}}x "
                    '%{request_processing_time}x %T %{response_processing_time}x %>s '
                    '%{backend_status_code}x %I %b "%r"'),
    # Amazon S3 server access log; total time in ms
    "awss3": ('%{owner}x %{bucket}x %t %h %{requester}x %{request_id}x %{operation}x %{key}x '
              '"%r" %>s %{error_code}x %b %{object_size}x %{ms}T %{turn_around}x '
              '"%{Referer}i" "%{User-Agent}i" %{rest}x'),
    # Google Cloud Storage usage log (CSV); time and duration in µs
    "cloudstorage": ('"%{usec}t","%a",%{c_ip_type}x,%{c_ip_region}x,"%m","%U","%>s",'
                     '%{cs_bytes}x,"%b","%{us}T",%{cs_host}x,"%{Referer}i","%{User-Agent}i",'
                     '%{rest}x'),
    # Squid's native access.log: end time to the ms, elapsed ms (space-padded), absolute URLs
    "squid": ("%{end:sec}t.%{end:msec_frac}t %{ms}T %h %{result}x/%>s %b %m %U %{user}x "
              "%{hierarchy}x %{type}x"),
    "squid-syslog": ("%{syslog}x: %{end:sec}t.%{end:msec_frac}t %{ms}T %h %{result}x/%>s %b %m "
                     "%U %{user}x %{hierarchy}x %{type}x"),
    # HAProxy's HTTP log format, through syslog or raw (stdout); Ta/Tt is the duration
    "haproxy": ("%{syslog}x: %h [%{%d/%b/%Y:%H:%M:%S}t.%{msec_frac}t] %{frontend}x "
                "%{backend}x %{TR}x/%{Tw}x/%{Tc}x/%{Tr}x/%{ms}T %>s %b %{flags}x \"%r\""),
    "haproxy-raw": ("%h [%{%d/%b/%Y:%H:%M:%S}t.%{msec_frac}t] %{frontend}x "
                    "%{backend}x %{TR}x/%{Tw}x/%{Tc}x/%{Tr}x/%{ms}T %>s %b %{flags}x \"%r\""),
    # Traefik's common log format: the request count, router, server URL and duration in ms
    "traefik-clf": (_COMBINED + ' %{requests}x "%{router}x" "%{server}x" %{ms}Tms'),
    # Christian Folini's (netnea) Apache layouts: microsecond times, and the extended one
    "netnea-extended": ('%h %{GEOIP_COUNTRY_CODE}e %u [%{%Y-%m-%d %H:%M:%S}t.%{usec_frac}t] '
                        '"%r" %>s %b "%{Referer}i" "%{User-Agent}i" "%{Content-Type}i" '
                        '%{remote}p %v %A %p %R %{BALANCER_WORKER_ROUTE}e %X "%{cookie}n" '
                        '%{UNIQUE_ID}e %{SSL_PROTOCOL}x %{SSL_CIPHER}x %I %O %{ratio}n%% %D '
                        '%{ModSecTimeIn}e %{ApplicationTime}e %{ModSecTimeOut}e '
                        '%{ModSecAnomalyScoreInPLs}e %{ModSecAnomalyScoreOutPLs}e '
                        '%{ModSecAnomalyScoreIn}e %{ModSecAnomalyScoreOut}e'),
    # ... and the extended one of 2015 (its example logs): no Content-Type, client port or
    # per-paranoia-level scores
    "netnea-extended-2015": ('%h %{GEOIP_COUNTRY_CODE}e %u [%{%Y-%m-%d %H:%M:%S}t.%{usec_frac}t] '
                             '"%r" %>s %b "%{Referer}i" "%{User-Agent}i" %v %A %p %R '
                             '%{BALANCER_WORKER_ROUTE}e %X "%{cookie}n" %{UNIQUE_ID}e '
                             '%{SSL_PROTOCOL}x %{SSL_CIPHER}x %I %O %{ratio}n%% %D '
                             '%{ModSecTimeIn}e %{ApplicationTime}e %{ModSecTimeOut}e '
                             '%{ModSecAnomalyScoreIn}e %{ModSecAnomalyScoreOut}e'),
    "netnea-combined": ('%h %l %u [%{%Y-%m-%d %H:%M:%S}t.%{usec_frac}t] "%r" %>s %b '
                        '"%{Referer}i" "%{User-Agent}i"'),
    # nginx's combined with timings: the nginx.com "upstream_time" layout, main + times, + time
    "nginx-timing": (_NGINX + ' rt=$request_time uct="$upstream_connect_time" '
                     'uht="$upstream_header_time" urt="$upstream_response_time"'),
    # ... as nginx's documentation prints it (its log_format has no space before rt=), so
    # servers configured from it write the agent's closing quote and rt= together
    "nginx-timing-docs": (_NGINX + 'rt=$request_time uct="$upstream_connect_time" '
                          'uht="$upstream_header_time" urt="$upstream_response_time"'),
    "nginx-main-timed": (_NGINX + ' "$http_x_forwarded_for" $request_time '
                         '$upstream_response_time'),
    "nginx-timed": _NGINX + " $request_time",
    # ... with $msec last: the end of the request to the millisecond (its own clock, kept)
    "nginx-msec": _NGINX + " $msec",
    "nginx-timed-msec": _NGINX + " $request_time $msec",
    # Kubernetes ingress-nginx's default log-format-upstream, and the one before 0.26
    "ingress-nginx": (_NGINX + " $request_length $request_time [$proxy_upstream_name] "
                      "[$proxy_alternative_upstream_name] $upstream_addr "
                      "$upstream_response_length $upstream_response_time $upstream_status "
                      "$req_id"),
    "ingress-nginx-legacy": (_NGINX + " $request_length $request_time [$proxy_upstream_name] "
                             "$upstream_addr $upstream_response_length "
                             "$upstream_response_time $upstream_status $req_id"),
    # Apache's combined with the time taken: %D (µs), %T (s), %{ms}T
    "combined-D": _COMBINED + " %D",
    "combined-T": _COMBINED + " %T",
    "combined-ms": _COMBINED + " %{ms}T",
}
#: directives of a preset that may follow padding spaces; clients written address:port (the
#: port after the last colon: IPv6 addresses keep theirs)
FLAGS: dict[str, dict[str, str]] = {
    "squid": {"%{ms}T": "pad"}, "squid-syslog": {"%{ms}T": "pad"},
    **{name: {"%h": "port"} for name in ("awsalb", "awselb", "awselb-2014", "haproxy",
                                         "haproxy-raw")}}
#: presets ``--format auto`` tries, before Apache's and nginx's defaults (first wins on ties:
#: combined-T and combined-ms read the same lines as combined-D, whole numbers, and are only
#: given by name; nginx-timed's $request_time has a fraction)
AUTO_ORDER = ("w3c", "cloudfront", "awsalb", "awselb", "awselb-2014", "awss3", "cloudstorage",
              "squid", "squid-syslog", "haproxy", "haproxy-raw", "traefik-clf", "netnea-extended",
              "netnea-extended-2015", "netnea-combined", "ingress-nginx", "ingress-nginx-legacy",
              "nginx-timing", "nginx-timing-docs", "nginx-main-timed", "nginx-timed-msec", "nginx-msec", "combined-D",
              "nginx-timed")

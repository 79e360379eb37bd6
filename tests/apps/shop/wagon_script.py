"""What a wagon replay of the shop needs that its access log does not say (HOOKS.md): the
login form's fields, the cart's and checkout's, the CSRF token each POST carries (taken again
from every page that shows a form: a login changes it, and a checkout may land on the login
form; each form is sent from its page), and the values of URLs that are the session's own: its order, its account.
``wagon replay s.jsonl --script wagon_script.py``."""
from wagon.replay.script import Script, contains, maybe, regex, status, when

TOKEN = maybe(regex(r'name="csrf_token" value="([0-9a-f]{32})"'))
ITEM = regex(r'name="item" value="(\d+)"')
ORDER = maybe(regex(r"<h1>Order (\d+)</h1>"))

script = Script()
script.data("users", "users.csv")                  # user<k>@example.test / secret<k>
for page in ("GET /login", "GET /login?next={next}", "GET /cart", "GET /", "GET /search?page={p}&q={q}"):
    script.on(page, extract={"csrf": TOKEN})
for page in ("GET /item/{id}", "GET /item?id={id}"):
    script.on(page, extract={"csrf": TOKEN, "item": maybe(ITEM)})
# each login is sent from its own form: /login's, or the one a checkout's redirect lands on
# (no click of the site: when the model's chain sends a session there from elsewhere, one
# already logged in, it is sent with the token the session holds, as the model's move says);
# where the scenario drew the login answered 200 (the log's users who typed a wrong password
# and tried again: site.move_statuses), a wrong password, so the retry is sent from the form
# the shop answered with, as theirs was


def password(v: dict) -> str:
    """The user's password, or a wrong one where the scenario drew the login answered 200."""
    return v["users.password"] if v["status"] != "200" else "not-" + v["users.password"]


for page, form in (("POST /login", "GET /login"), ("POST /login?next={next}", "GET /login?next={next}")):
    script.on(page, after=[form], form={"email": "{users.email}", "password": password,
                                        "csrf_token": "{csrf}"}, extract={"csrf": TOKEN},
              check=[when(303, contains(">Log out</a>")),
                     when(200, contains("Wrong e-mail address or password."))])
script.on("POST /cart", after=["GET /item/{item}", "GET /item?id={item}"], form={"item": "{item}", "qty": "1", "csrf_token": "{csrf}"},
          extract={"csrf": TOKEN}, check=status(200))   # 303 to /cart, whose form has the token
script.on("POST /checkout", after=["GET /cart"], form={"csrf_token": "{csrf}"},
          extract={"csrf": TOKEN, "order": ORDER}, check=status(200))
script.on("GET /orders/{id}", url={"id": "{order}"})
script.on("GET /account?email={email}", url={"email": "{users.email}"})

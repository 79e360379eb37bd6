"""What a wagon replay of the shop needs that its access log does not say (HOOKS.md): the
login form's fields, the cart's and checkout's, and the CSRF token each POST carries, taken
from the last page that showed a form. ``wagon replay s.jsonl --script wagon_script.py``."""
from wagon.replay.script import Script, contains, maybe, regex, status

TOKEN = regex(r'name="csrf_token" value="([0-9a-f]{32})"')
ITEM = regex(r'name="item" value="(\d+)"')
FORM = {"csrf": TOKEN}

script = Script()
script.data("users", "users.csv")                  # user<k>@example.test / secret<k>
for page in ("GET /login", "GET /login?next={next}", "GET /cart"):
    script.on(page, extract=FORM)
for page in ("GET /item/{id}", "GET /item?id={id}"):
    script.on(page, extract={"csrf": TOKEN, "item": ITEM})
for page in ("POST /login", "POST /login?next={next}"):    # a failed login shows the form again
    script.on(page, form={"email": "{users.email}", "password": "{users.password}",
                          "csrf_token": "{csrf}"}, extract={"csrf": maybe(TOKEN)},
              check=contains(">Log out</a>"))
script.on("POST /cart", form={"item": "{item}", "qty": "1", "csrf_token": "{csrf}"},
          extract=FORM, check=status(200))         # 303 to /cart, whose form has the token
script.on("POST /checkout", form={"csrf_token": "{csrf}"}, check=status(200))

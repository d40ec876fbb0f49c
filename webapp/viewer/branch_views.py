"""The viewer's page for branches: a turn's version that is sent beside one that is kept."""
from flask import current_app, jsonify, render_template, request

from ..access import get_conversation_or_404
from . import branch_compare
from .views import bp


@bp.get("/c/<conversation_id>/viewer/compare/branches")
def compare_branches(conversation_id):
    """Set two versions of a turn side by side, with the request each one received."""
    conversation = get_conversation_or_404(conversation_id)
    try:
        comparison, error = branch_compare.compare_branches(conversation, request.args,
                                                             current_app.config), None
    except branch_compare.BranchChoiceError as problem:
        comparison, error = None, str(problem)
    if request.args.get("format") == "json":
        if error:
            return jsonify({"error": error}), 400
        return jsonify(comparison.payload() if comparison else {"turn": None})
    return render_template("viewer/compare_branches.html", conversation=conversation,
                           comparison=comparison, error=error), 400 if error else 200

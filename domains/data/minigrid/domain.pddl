; Mini-Grid: a robot in a grid of rooms joined by locked doors walks to a goal cell. It carries at most one
; key; a key opens the doors it fits. Written for critiquebench after the intrinsic self-critique paper's
; Mini-Grid datasets (the paper does not publish its PDDL; this encoding is ours).
(define (domain minigrid)
  (:requirements :strips :typing)
  (:types cell key)
  (:predicates
    (at-robot ?c - cell)
    (adjacent ?from ?to - cell)
    (open ?c - cell)
    (locked ?c - cell)
    (key-at ?k - key ?c - cell)
    (fits ?k - key ?c - cell)
    (holding ?k - key)
    (hand-empty))
  (:action move
    :parameters (?from ?to - cell)
    :precondition (and (at-robot ?from) (adjacent ?from ?to) (open ?to))
    :effect (and (at-robot ?to) (not (at-robot ?from))))
  (:action pick-up
    :parameters (?k - key ?c - cell)
    :precondition (and (at-robot ?c) (key-at ?k ?c) (hand-empty))
    :effect (and (holding ?k) (not (key-at ?k ?c)) (not (hand-empty))))
  (:action drop
    :parameters (?k - key ?c - cell)
    :precondition (and (at-robot ?c) (holding ?k))
    :effect (and (key-at ?k ?c) (hand-empty) (not (holding ?k))))
  (:action unlock
    :parameters (?from ?door - cell ?k - key)
    :precondition (and (at-robot ?from) (adjacent ?from ?door) (locked ?door) (holding ?k) (fits ?k ?door))
    :effect (and (open ?door) (not (locked ?door)))))
